// theme.js: light or dark, and the colours the charts draw with.
//
// The page follows the system's setting (prefers-color-scheme) until the top bar's toggle
// picks the other theme; that choice is kept in localStorage, and toggling back to what the
// system shows forgets it (the page follows the system again). The theme is the
// `data-theme` attribute of <html> ("light" or "dark"), which switches style.css's custom
// properties; it is set when this module is first imported, before the views draw.
//
// Charts cannot use CSS variables (plotly and the canvases take colour strings), so they
// read them here, through chartColours(), and redraw on onThemeChange (plots/plotly.js
// restyles every plotly chart of the page at once). The colours themselves live only in
// style.css, the one place to change them.

const STORAGE_KEY = 'sumlens.theme';
const THEMES = ['light', 'dark'];
const system = window.matchMedia('(prefers-color-scheme: dark)');
const listeners = new Set();

/** The theme shown now: "light" or "dark". */
export function currentTheme() {
  return document.documentElement.dataset.theme === 'dark' ? 'dark' : 'light';
}

function systemTheme() {
  return system.matches ? 'dark' : 'light';
}

/** The theme chosen with the toggle (null: follow the system). */
function chosenTheme() {
  try {
    const theme = window.localStorage.getItem(STORAGE_KEY);
    return THEMES.includes(theme) ? theme : null;
  } catch {
    return null; // storage refused (a private window's policy): follow the system
  }
}

function show(theme) {
  if (document.documentElement.dataset.theme === theme) return;
  document.documentElement.dataset.theme = theme;
  for (const listener of listeners) listener(theme);
}

/** Show `theme` and remember it, unless it is the system's (then follow the system). */
export function setTheme(theme) {
  if (!THEMES.includes(theme)) throw new Error(`Unknown theme ${theme}: light or dark.`);
  try {
    if (theme === systemTheme()) window.localStorage.removeItem(STORAGE_KEY);
    else window.localStorage.setItem(STORAGE_KEY, theme);
  } catch {
    // not kept: the theme still changes for this page
  }
  show(theme);
}

/** Call `listener(theme)` after each change of theme; returns what stops it. */
export function onThemeChange(listener) {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/**
 * The charts' colours in the theme shown now (style.css's --chart-* and a few others):
 * background, text, muted (axis titles), grid, frame, hover box, and the accent.
 */
export function chartColours() {
  const style = window.getComputedStyle(document.documentElement);
  const read = (name) => style.getPropertyValue(name).trim();
  return {
    background: read('--chart-bg'),
    text: read('--chart-text'),
    muted: read('--chart-muted'),
    grid: read('--chart-grid'),
    frame: read('--chart-frame'),
    hoverBackground: read('--chart-hover-bg'),
    hoverBorder: read('--chart-hover-border'),
    accent: read('--accent'),
  };
}

/** Make `button` the top bar's toggle between the two themes. */
export function themeToggle(button) {
  const sync = (theme) => {
    const dark = theme === 'dark';
    button.setAttribute('aria-pressed', String(dark));
    button.textContent = dark ? '☀' : '☾';
    button.title = dark ? 'Switch to the light theme' : 'Switch to the dark theme';
  };
  button.addEventListener('click', () => setTheme(currentTheme() === 'dark' ? 'light' : 'dark'));
  onThemeChange(sync);
  sync(currentTheme());
}

system.addEventListener('change', () => {
  if (!chosenTheme()) show(systemTheme());
});
// another tab of the dashboard toggled: follow it
window.addEventListener('storage', (event) => {
  if (event.key === STORAGE_KEY || event.key === null) show(chosenTheme() ?? systemTheme());
});
show(chosenTheme() ?? systemTheme());
