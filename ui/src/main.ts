import { mount } from 'svelte';
import App from './App.svelte';
import './app.css';
import { exchangeEarly } from './lib/auth/signin.svelte';

const start = () => mount(App, { target: document.getElementById('app')! });

// index.html sends the screen's subscription in the socket's open event; the app's
// mount is one long task that would hold that event back: it waits for the
// subscription to leave (or index.html to say none will), at most 30 ms
const early = (globalThis as { __synopticEarly?: { ready?: Promise<void> } }).__synopticEarly;
// back from the provider: the code goes to the token endpoint first; the mount waits
// a task so that the request has left, and the exchange and the mount overlap
const exchanging = exchangeEarly();
const waits: Promise<unknown>[] = [];
if (early?.ready) waits.push(Promise.race([early.ready, new Promise<void>((r) => setTimeout(r, 30))]));
if (exchanging) waits.push(new Promise<void>((r) => setTimeout(r, 0)));
export default waits.length ? Promise.all(waits).then(start) : start();
