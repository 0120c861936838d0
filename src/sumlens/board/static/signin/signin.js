// signin.js: the sign-in form. Posts {"token": ...} to api/v1/session (through core/api.js,
// whose base is this page's directory, so any --url-path-prefix works); the server answers
// with the session cookie, and the page goes back to the dashboard at the address the user
// asked for (its hash survives the redirect to this page). A wrong token is said plainly and
// the field is cleared; the token is never put in the URL or kept by the page.

import { ApiError, sendJSON } from '../core/api.js';

const form = document.getElementById('signin');
const field = document.getElementById('token');
const button = document.getElementById('submit');
const message = document.getElementById('message');

function say(text) {
  message.textContent = text;
  message.hidden = !text;
}

async function signIn(event) {
  event.preventDefault();
  const token = field.value.trim();
  if (!token) {
    say('Enter your access token.');
    return;
  }
  button.disabled = true;
  say('');
  try {
    await sendJSON('POST', 'session', [], { token });
    // back to the address asked for: a redirect here keeps its hash (#/scalars?run=...)
    window.location.assign(new URL(`./${location.hash}`, document.baseURI));
  } catch (error) {
    field.value = '';
    field.focus();
    if (error instanceof ApiError && error.status === 401) {
      say('That token is wrong: check it and try again.');
    } else if (error instanceof ApiError) {
      say(`Signing in failed: ${error.detail}`);
    } else {
      say('The dashboard did not answer: try again in a moment.');
    }
  } finally {
    button.disabled = false;
  }
}

form.addEventListener('submit', signIn);
