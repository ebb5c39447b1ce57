// A classic script in <head>: the server sends it late, and the parser waits for it
// before it can render anything (a render-blocking resource).
document.documentElement.setAttribute("data-blocking-script", "ran");
