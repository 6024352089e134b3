/**
 * What the page says about a refusal from the gateway: in the user's words, with
 * what to do, never the protocol's codes (docs/protocol.md, `err`).
 */

/** The sentence shown for an `err` frame's `code` and `msg`. */
export function userMessage(code: string, msg: string): string {
  switch (code) {
    case 'bad_channel':
      return `A channel name is not valid (${msg}): correct it in the editor.`;
    case 'forbidden':
      return `${capitalise(msg)}: ask for read access, or sign in as someone who has it.`;
    case 'too_many_channels':
    case 'too_many_subscriptions':
      return 'This page shows more channels than the gateway serves one page: split the screen into smaller ones.';
    case 'unavailable':
      return 'The data bus is down: values come back by themselves when it returns.';
    case 'rate_limited':
      return 'The page asked the gateway too fast and some requests were dropped: reload if values look stuck.';
    case 'unauthorized':
      return 'Your sign-in was refused or has expired: sign in again.';
    case 'internal':
      return 'The gateway failed to serve a request (its log says why): reload to try again.';
    default:
      return 'The gateway refused a request from this page: reload to try again.';
  }
}

function capitalise(s: string): string {
  return s ? s[0].toUpperCase() + s.slice(1) : s;
}
