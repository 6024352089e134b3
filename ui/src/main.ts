import { mount } from 'svelte';
import App from './App.svelte';
import './app.css';

const start = () => mount(App, { target: document.getElementById('app')! });

// index.html sends the screen's subscription in the socket's open event; the app's
// mount is one long task that would hold that event back: it waits for the
// subscription to leave (or index.html to say none will), at most 30 ms
const early = (globalThis as { __synopticEarly?: { ready?: Promise<void> } }).__synopticEarly;
export default early?.ready ? Promise.race([early.ready, new Promise<void>((r) => setTimeout(r, 30))]).then(start) : start();
