// Reports the viewport and user agent the page saw, once the page has painted its content.
// Not before: a request that ends before the largest paint becomes part of Lighthouse's
// simulated LCP (Lantern keeps every request finished by then), so a beacon racing the paint
// made the same page's LCP jump between two values one simulated round trip apart. Sent after
// load, once the browser has reported the first contentful paint and the paint of every
// element marked `elementtiming` (the heavy page's hero image), or 3 s after load at the latest
// (a page that is never painted, such as a hidden tab, still reports).
(function () {
  var sent = false;
  function send() {
    if (sent) return;
    sent = true;
    var body = JSON.stringify({
      page: {{ page|tojson }},
      path: location.pathname + location.search,
      innerWidth: innerWidth,
      innerHeight: innerHeight,
      devicePixelRatio: devicePixelRatio,
      userAgent: navigator.userAgent
    });
    if (!(navigator.sendBeacon && navigator.sendBeacon("/beacon", body))) {
      fetch("/beacon", {method: "POST", body: body, keepalive: true});
    }
  }
  function afterPaints(callback) {
    var types = (window.PerformanceObserver && PerformanceObserver.supportedEntryTypes) || [];
    var painted = types.indexOf("paint") < 0;
    var marked = types.indexOf("element") < 0 ? 0
      : document.querySelectorAll("[elementtiming]").length;
    var timed = {};
    function check() {
      if (painted && Object.keys(timed).length >= marked) setTimeout(callback, 0);
    }
    if (!painted) {
      new PerformanceObserver(function (list, observer) {
        if (list.getEntriesByName("first-contentful-paint").length) {
          observer.disconnect();
          painted = true;
          check();
        }
      }).observe({type: "paint", buffered: true});
    }
    if (marked) {
      new PerformanceObserver(function (list) {
        list.getEntries().forEach(function (entry) { timed[entry.identifier] = true; });
        check();
      }).observe({type: "element", buffered: true});
    }
    check();
  }
  addEventListener("load", function () {
    afterPaints(send);
    setTimeout(send, 3000);
  });
})();
