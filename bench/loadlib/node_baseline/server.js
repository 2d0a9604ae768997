// The peer baseline: the bare room broadcast of ../baseline_server.py, on Node with `ws` (the
// WebSocket library Colyseus and many game servers run on). No rules, no log, no views.
//
//     node server.js [--host 127.0.0.1] [--port 0]
//
// prints `listening on ws://HOST:PORT` (the bound port when given --port 0). The protocol is
// baseline_server.py's, byte for byte, so bench/loadlib/players.py drives both unchanged: a
// connection's first frame names its room, {"room": "r1", "seat": 3}; every join is broadcast to
// the room as {"seq":0,"members":N}; every later frame is an action, numbered per room and sent as
// {"seq":Q,"a":<the action as received>,"pad":"..."} (about 1 KB, the same padding rule) to every
// member of the room, the sender included. A first frame that is not a join closes the
// connection. SIGTERM / SIGINT stop it (exit status 0).
//
// One difference is Node's own, and deliberate: `ws.send` queues in the socket instead of waiting
// for each send as trio-websocket's `await send_message` does; that is how Node servers broadcast.
"use strict";

const { WebSocketServer, WebSocket } = require("ws");

const UPDATE_BYTES = 1024;
const head = (seq, a) => `{"seq":${seq},"a":${a},"pad":"`;
// Pad so that a typical frame (seq of 4 digits, a ~40-byte action) is about UPDATE_BYTES long.
const PAD = "x".repeat(UPDATE_BYTES - head(1000, '{"seat":0,"n":10,"act":"commit"}').length - 2);
const MAX_MESSAGE = 1 << 20; // trio-websocket's default max_message_size

function parseArgs(argv) {
  const opts = { host: "127.0.0.1", port: 0 };
  for (let i = 0; i < argv.length; i++) {
    let [key, value] = argv[i].split(/=(.*)/s);
    if (value === undefined && (key === "--host" || key === "--port")) value = argv[++i];
    if (key === "--host" && value) opts.host = value;
    else if (key === "--port" && /^\d+$/.test(value || "")) opts.port = Number(value);
    else {
      process.stderr.write(`usage: node server.js [--host HOST] [--port PORT]\n`);
      process.exit(2);
    }
  }
  return opts;
}

/** A join frame, as baseline_server.py's Join decodes it: a string room and an integer seat. */
function parseJoin(text) {
  let join;
  try {
    join = JSON.parse(text);
  } catch {
    return null;
  }
  const ok =
    join !== null &&
    typeof join === "object" &&
    typeof join.room === "string" &&
    Number.isInteger(join.seat);
  return ok ? join : null;
}

function broadcast(room, text) {
  const data = Buffer.from(text); // encoded once, sent to every member as a text frame
  for (const member of room.members) {
    if (member.readyState === WebSocket.OPEN) member.send(data, { binary: false });
  }
}

function main() {
  const { host, port } = parseArgs(process.argv.slice(2));
  const rooms = new Map(); // name -> { members: Set<WebSocket>, seq }
  const wss = new WebSocketServer({ host, port, perMessageDeflate: false, maxPayload: MAX_MESSAGE });

  wss.on("connection", (ws) => {
    let name = null;
    let room = null;
    ws.on("error", () => {}); // the close that follows does the clean-up
    ws.on("message", (data) => {
      const text = data.toString("utf8");
      if (room === null) {
        const join = parseJoin(text);
        if (join === null) {
          ws.close(1000);
          return;
        }
        name = join.room;
        room = rooms.get(name);
        if (room === undefined) {
          room = { members: new Set(), seq: 0 };
          rooms.set(name, room);
        }
        room.members.add(ws);
        broadcast(room, `{"seq":0,"members":${room.members.size}}`);
        return;
      }
      room.seq += 1;
      broadcast(room, head(room.seq, text) + PAD + '"}');
    });
    ws.on("close", () => {
      if (room === null) return;
      room.members.delete(ws);
      if (room.members.size === 0 && rooms.get(name) === room) rooms.delete(name);
    });
  });

  wss.on("listening", () => {
    console.log(`listening on ws://${host}:${wss.address().port}`);
  });
  wss.on("error", (err) => {
    process.stderr.write(`node baseline: ${err.message}\n`);
    process.exit(1);
  });

  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    for (const ws of wss.clients) ws.close(1001);
    wss.close(() => process.exit(0));
    setTimeout(() => process.exit(0), 1000).unref(); // a peer that never answers the close
  };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
}

main();
