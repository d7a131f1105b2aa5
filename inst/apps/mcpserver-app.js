// The view side of an MCP App (the io.modelcontextprotocol/ui extension,
// specification 2026-01-26), inlined by mcpserver::mcp_app() at the top of
// every app document. It speaks the extension's JSON-RPC over postMessage
// with the host: the ui/initialize handshake, the tool's input and result,
// size changes, and requests the app makes (tools/call, ui/message,
// ui/open-link). It renders the views the server sends with a tool result
// (an htmlwidget or HTML, in the result's _meta["mcpserver/view"]) and
// offers the rest to the page's own scripts as window.mcpApp:
//
//   mcpApp.on("result", function (result) { ... })  // also "input", "cancelled",
//                                                   // "context", "render", "teardown"
//   mcpApp.callTool("name", {arg: 1}).then(mcpApp.render)
//   mcpApp.sendMessage("text"); mcpApp.openLink("https://...")
//
// Written for the browser as it is (no build step, no modules), so that an
// app stays one self-contained HTML document.
(function () {
  "use strict";
  if (window.mcpApp) return;

  var PROTOCOL_VERSION = "2026-01-26";
  var VIEW_KEY = "mcpserver/view";
  var options = window.mcpAppOptions || {};
  var nextId = 1;
  var pending = {};
  var handlers = {};
  var latest = {};
  var loaded = {};
  (options.inlined || []).forEach(function (name) {
    loaded[name] = true;
  });

  function post(message) {
    window.parent.postMessage(message, "*");
  }

  function request(method, params) {
    var id = nextId++;
    return new Promise(function (resolve, reject) {
      pending[id] = { resolve: resolve, reject: reject };
      post({ jsonrpc: "2.0", id: id, method: method, params: params || {} });
    });
  }

  function notify(method, params) {
    var message = { jsonrpc: "2.0", method: method };
    if (params) message.params = params;
    post(message);
  }

  // Late subscribers get the latest event of their kind at once: a page's
  // scripts may run after the host has sent the result.
  function emit(event, data) {
    latest[event] = data;
    (handlers[event] || []).forEach(function (handler) {
      try {
        handler(data);
      } catch (e) {
        console.error("[mcpserver app]", e);
      }
    });
  }

  function on(event, handler) {
    (handlers[event] = handlers[event] || []).push(handler);
    if (Object.prototype.hasOwnProperty.call(latest, event)) handler(latest[event]);
    return api;
  }

  // The element views are rendered into: the page's own, or one added last.
  function slot() {
    var element = document.querySelector(".mcpserver-view");
    if (!element) {
      element = document.createElement("div");
      element.className = "mcpserver-view";
      document.body.appendChild(element);
    }
    return element;
  }

  // Scripts and styles a view needs that the document does not inline yet,
  // as text (inline elements are what the extension's default CSP allows).
  function addDependencies(dependencies) {
    (dependencies || []).forEach(function (dependency) {
      if (loaded[dependency.name]) return;
      loaded[dependency.name] = true;
      (dependency.stylesheets || []).forEach(function (css) {
        var style = document.createElement("style");
        style.textContent = css;
        document.head.appendChild(style);
      });
      (dependency.scripts || []).forEach(function (js) {
        var script = document.createElement("script");
        script.text = js;
        document.head.appendChild(script);
      });
    });
  }

  function renderView(view) {
    addDependencies(view.dependencies);
    var element = slot();
    element.innerHTML = view.html || "";
    if (window.HTMLWidgets && window.HTMLWidgets.staticRender) window.HTMLWidgets.staticRender();
    emit("render", element);
  }

  function renderText(result) {
    var text = (result.content || [])
      .filter(function (block) {
        return block.type === "text";
      })
      .map(function (block) {
        return block.text;
      })
      .join("\n");
    var pre = document.createElement("pre");
    pre.className = "mcpserver-text";
    pre.textContent = text;
    var element = slot();
    element.innerHTML = "";
    element.appendChild(pre);
    emit("render", element);
  }

  // Shows a tool result's view; a page made without a view of its own
  // (mcp_app() of nothing) shows the text of a result that has none.
  function render(result) {
    var view = result && result._meta && result._meta[VIEW_KEY];
    if (view) renderView(view);
    else if (options.generic && result) renderText(result);
    return result;
  }

  function applyContext(context) {
    if (!context) return;
    api.hostContext = Object.assign({}, api.hostContext, context);
    if (context.theme) {
      document.documentElement.setAttribute("data-theme", context.theme);
      document.documentElement.style.colorScheme = context.theme;
    }
    emit("context", api.hostContext);
  }

  // The host sizes the frame to the document: report its size as it changes.
  function watchSize() {
    var width = 0;
    var height = 0;
    var scheduled = false;
    function measure() {
      if (scheduled) return;
      scheduled = true;
      requestAnimationFrame(function () {
        scheduled = false;
        var root = document.documentElement;
        var saved = root.style.height;
        root.style.height = "max-content";
        var h = Math.ceil(root.getBoundingClientRect().height);
        root.style.height = saved;
        var w = Math.ceil(window.innerWidth);
        if (w !== width || h !== height) {
          width = w;
          height = h;
          notify("ui/notifications/size-changed", { width: w, height: h });
        }
      });
    }
    measure();
    if (window.ResizeObserver) {
      var observer = new ResizeObserver(measure);
      observer.observe(document.documentElement);
      observer.observe(document.body);
    }
  }

  function answer(message) {
    var reply = { jsonrpc: "2.0", id: message.id };
    if (message.method === "ui/resource-teardown") {
      emit("teardown", message.params || {});
      reply.result = {};
    } else if (message.method === "ping") {
      reply.result = {};
    } else {
      reply.error = { code: -32601, message: "Method not found: " + message.method };
    }
    post(reply);
  }

  var notifications = {
    "ui/notifications/tool-input": function (params) {
      api.toolInput = params.arguments || {};
      emit("input", api.toolInput);
    },
    "ui/notifications/tool-input-partial": function (params) {
      emit("partial-input", params.arguments || {});
    },
    "ui/notifications/tool-result": function (params) {
      api.toolResult = params;
      render(params);
      emit("result", params);
    },
    "ui/notifications/tool-cancelled": function (params) {
      emit("cancelled", params);
    },
    "ui/notifications/host-context-changed": applyContext,
  };

  window.addEventListener("message", function (event) {
    if (event.source !== window.parent) return;
    var message = event.data;
    if (!message || message.jsonrpc !== "2.0") return;
    if (message.method === undefined) {
      var waiting = pending[message.id];
      if (!waiting) return;
      delete pending[message.id];
      if (message.error) {
        var error = new Error(message.error.message || "request failed");
        error.code = message.error.code;
        error.data = message.error.data;
        waiting.reject(error);
      } else {
        waiting.resolve(message.result);
      }
    } else if (message.id !== undefined) {
      answer(message);
    } else if (notifications[message.method]) {
      notifications[message.method](message.params || {});
    }
  });

  function start() {
    request("ui/initialize", {
      appInfo: { name: options.name || document.title || "mcpserver app", version: options.version || "1.0.0" },
      appCapabilities: { availableDisplayModes: ["inline"] },
      protocolVersion: PROTOCOL_VERSION,
    }).then(
      function (result) {
        api.hostInfo = result.hostInfo;
        api.hostCapabilities = result.hostCapabilities || {};
        notify("ui/notifications/initialized");
        api.initialized = true;
        applyContext(result.hostContext || {});
        watchSize();
      },
      function (error) {
        console.error("[mcpserver app] the host refused ui/initialize:", error);
      }
    );
  }

  var api = {
    initialized: false,
    hostContext: {},
    hostCapabilities: {},
    hostInfo: null,
    toolInput: null,
    toolResult: null,
    on: on,
    render: render,
    request: request,
    callTool: function (name, args) {
      return request("tools/call", { name: name, arguments: args || {} });
    },
    sendMessage: function (text) {
      return request("ui/message", { role: "user", content: [{ type: "text", text: String(text) }] });
    },
    openLink: function (url) {
      return request("ui/open-link", { url: String(url) });
    },
  };
  window.mcpApp = api;

  // The handshake waits for the page's own scripts (they run while the
  // document is parsed), so their handlers see the first events.
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
