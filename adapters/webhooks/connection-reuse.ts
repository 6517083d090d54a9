import diagnostics from 'node:diagnostics_channel';
import type { Socket } from 'node:net';

/*
 * Which failed requests a reused keep-alive connection dropped before any byte of their answer arrived: the one
 * failure that may be sent again at once (CONTRACT §7). A receiver closes an idle connection on its own schedule; a
 * request written on it just then was never read, and says nothing about the receiver's health.
 *
 * Told from undici's diagnostics channels, its documented observation API (docs/api/DiagnosticsChannel.md, typed in
 * types/diagnostics-channel.d.ts): `undici:client:sendHeaders` is published right before a request's first byte is
 * written and names the socket it goes on; `undici:request:error` is published, for the same request object, before
 * the caller's promise rejects. So a failure is judged by the very socket its request went on: reused when that socket
 * had carried a request before; unanswered when the socket has read nothing since this request was written. Other ways
 * fall short: the socket info on undici's `SocketError` is missing from plain ECONNRESET and EPIPE errors and counts
 * the bytes of the connection's whole life, not of this request; a custom `connect` sees sockets made but not which
 * request goes on which. On TLS, `bytesRead` counts what was decrypted: a close_notify reads nothing.
 */

/** Errors of a connection that ended under a request (not a timeout, a refusal or our own close). */
const DROPS = new Set(['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET']);

interface Sent {
  socket: Socket;
  reused: boolean;
  bytesReadBefore: number;
}

const sent = new WeakMap<object, Sent>();
const carried = new WeakSet<Socket>();
const droppedUnanswered = new WeakSet<object>();

function onSendHeaders(message: unknown) {
  const { request, socket } = message as { request: object; socket: Socket };
  sent.set(request, { socket, reused: carried.has(socket), bytesReadBefore: socket.bytesRead });
  carried.add(socket);
}

function onRequestError(message: unknown) {
  const { request, error } = message as { request: object; error: unknown };
  const how = sent.get(request);
  if (!how?.reused || how.socket.bytesRead !== how.bytesReadBefore || typeof error !== 'object' || error === null)
    return;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && DROPS.has(code)) droppedUnanswered.add(error);
}

let watchers = 0;

/**
 * Starts watching undici's requests (every sender that relies on `wasDroppedUnanswered` holds a watch while it may
 * send); answers the function that ends this watch. The channels are the process's: requests of every undici in it are
 * seen, and judged only when asked about.
 */
export function watchConnectionReuse(): () => void {
  if (watchers++ === 0) {
    diagnostics.subscribe('undici:client:sendHeaders', onSendHeaders);
    diagnostics.subscribe('undici:request:error', onRequestError);
  }
  let watching = true;
  return () => {
    if (!watching) return;
    watching = false;
    if (--watchers === 0) {
      diagnostics.unsubscribe('undici:client:sendHeaders', onSendHeaders);
      diagnostics.unsubscribe('undici:request:error', onRequestError);
    }
  };
}

/** True when this error ended a request that a reused connection dropped before any byte of an answer arrived. */
export const wasDroppedUnanswered = (error: unknown): boolean =>
  typeof error === 'object' && error !== null && droppedUnanswered.has(error);
