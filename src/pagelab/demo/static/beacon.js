addEventListener("load", function () {
  // After load and off the critical path, so it does not move the page's metrics.
  setTimeout(function () {
    var body = JSON.stringify({
      page: "{{page}}",
      path: location.pathname + location.search,
      innerWidth: innerWidth,
      innerHeight: innerHeight,
      devicePixelRatio: devicePixelRatio,
      userAgent: navigator.userAgent
    });
    if (!(navigator.sendBeacon && navigator.sendBeacon("/beacon", body))) {
      fetch("/beacon", {method: "POST", body: body, keepalive: true});
    }
  }, 0);
});
