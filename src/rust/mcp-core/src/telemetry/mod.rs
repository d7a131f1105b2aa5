//! Telemetry: an OpenTelemetry SERVER span for every request, named and
//! described by the semantic conventions for MCP, exported over OTLP/HTTP.
//!
//! The engine starts a span when it reads a request and ends it when it
//! writes the response ([`spans`]); it holds only a [`Telemetry`] handle,
//! and none at all when telemetry is off, so a server without it pays a
//! test of an `Option` per request. Finished spans go to a bounded queue
//! and are exported in batches on a thread of their own ([`export`]): R's
//! thread and the control plane never wait for the collector, and a span
//! that finds the queue full is dropped and counted.
//!
//! Configuration follows the OpenTelemetry environment variables (the
//! SDK and the OTLP exporter read them), which [`Settings`] from R may
//! override. This layer sits between `stores` and `engine`: it uses only
//! `util`, and it owns one thread (the exporter's), started through
//! [`crate::util::threads`].

pub mod children;
pub mod export;
pub mod metrics;
pub mod spans;
pub mod tasks;

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_sdk::metrics::exporter::PushMetricExporter;
use opentelemetry_sdk::trace::{Sampler, SdkTracer, SdkTracerProvider, SpanExporter};
use opentelemetry_sdk::Resource;
use std::sync::Arc;
use std::time::Duration;

pub use spans::{Ambient, Capture, Ending, Peer, RequestSpan, SpanIds, Transport};

/// The variable that turns every OpenTelemetry SDK off.
pub const SDK_DISABLED: &str = "OTEL_SDK_DISABLED";
/// Variables whose presence turns telemetry on when R did not ask for it.
pub const ENDPOINT_VARS: &[&str] = &[
    "OTEL_EXPORTER_OTLP_ENDPOINT",
    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
];
/// `none` here keeps the metrics from being sent (they are still not
/// made for nothing: no exporter, no export).
pub const METRICS_EXPORTER: &str = "OTEL_METRICS_EXPORTER";

/// What R's `mcp_telemetry()` says; `None` fields fall back to the
/// environment (and then to the SDK's defaults).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Settings {
    /// Asked for from R (`mcp_server(telemetry = mcp_telemetry(...))`):
    /// on even without an endpoint variable (the OTLP default,
    /// `http://localhost:4318`, is used).
    pub requested: bool,
    /// The OTLP base endpoint (`/v1/traces` is appended), as
    /// `OTEL_EXPORTER_OTLP_ENDPOINT`.
    pub endpoint: Option<String>,
    /// Extra HTTP headers for the collector (an API key, say).
    pub headers: Vec<(String, String)>,
    pub service_name: Option<String>,
    /// The fraction of traces sampled, parent-based (a sampled parent is
    /// always followed).
    pub sample: Option<f64>,
    /// What of a tool call's content spans record (nothing by default;
    /// only R asks for more, never the environment).
    pub capture: Capture,
}

impl Settings {
    /// Whether these settings, with the environment `var` reads, turn
    /// telemetry on: asked for, or an endpoint variable set, and not
    /// disabled by `OTEL_SDK_DISABLED=true`.
    pub fn enabled(&self, var: impl Fn(&str) -> Option<String>) -> bool {
        let disabled = var(SDK_DISABLED).is_some_and(|v| v.trim().eq_ignore_ascii_case("true"));
        if disabled {
            return false;
        }
        self.requested
            || ENDPOINT_VARS
                .iter()
                .any(|name| var(name).is_some_and(|v| !v.trim().is_empty()))
    }
}

/// The running telemetry of one server: its tracer, its metrics and its
/// export queue.
pub struct Telemetry {
    provider: SdkTracerProvider,
    tracer: SdkTracer,
    metrics: Arc<metrics::Metrics>,
    queue: Arc<export::Counts>,
    capture: Capture,
    /// The spans of tasks still running (any engine of the server may see
    /// a task change, so they are kept here rather than in one engine).
    tasks: std::sync::Mutex<tasks::TaskSpans>,
}

impl std::fmt::Debug for Telemetry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Telemetry").finish_non_exhaustive()
    }
}

/// How long a server's end waits for the last spans to reach the collector.
pub const FLUSH_AT_STOP: Duration = Duration::from_secs(3);

impl Telemetry {
    /// Telemetry by `settings` and the environment, exporting over
    /// OTLP/HTTP protobuf; `None` when it is off. An exporter that cannot
    /// be made (a malformed endpoint) is reported on stderr and leaves
    /// telemetry off: serving goes on.
    pub fn start(settings: &Settings) -> Option<Arc<Telemetry>> {
        if !settings.enabled(|name| std::env::var(name).ok()) {
            return None;
        }
        let headers: std::collections::HashMap<_, _> = settings.headers.iter().cloned().collect();
        let endpoint = settings.endpoint.as_deref();
        let spans = match export::otlp_exporter(endpoint, headers.clone()) {
            Ok(exporter) => exporter,
            Err(e) => {
                eprintln!("mcpserver: telemetry is off: {e}");
                return None;
            }
        };
        let wanted = std::env::var(METRICS_EXPORTER)
            .map_or(true, |v| !v.trim().eq_ignore_ascii_case("none"));
        let metrics = match wanted.then(|| export::otlp_metric_exporter(endpoint, headers)) {
            Some(Ok(exporter)) => Some(exporter),
            Some(Err(e)) => {
                eprintln!("mcpserver: telemetry: metrics are not sent: {e}");
                None
            }
            None => None,
        };
        let interval = export::metric_interval(|name| std::env::var(name).ok());
        Some(Arc::new(Telemetry::with_exporters(
            settings, spans, metrics, interval,
        )))
    }

    /// Telemetry that hands finished spans to `exporter` and sends no
    /// metrics (tests pass an exporter that keeps the spans).
    pub fn with_exporter(settings: &Settings, exporter: impl SpanExporter + 'static) -> Telemetry {
        Telemetry::with_exporters(
            settings,
            exporter,
            None::<opentelemetry_otlp::MetricExporter>,
            export::METRIC_INTERVAL,
        )
    }

    /// Telemetry that hands finished spans to `spans` and the metrics'
    /// aggregate to `metrics` every `interval` (and when flushed).
    pub fn with_exporters<M: PushMetricExporter>(
        settings: &Settings,
        spans: impl SpanExporter + 'static,
        metrics: Option<M>,
        interval: Duration,
    ) -> Telemetry {
        let resource = resource(settings);
        let measured = Arc::new(metrics::Metrics::new(resource.clone()));
        let metric_export = export::MetricExport {
            metrics: measured.clone(),
            exporter: metrics,
            interval,
        };
        let (processor, queue) =
            export::Batcher::start(spans, metric_export, export::QUEUE_SIZE, &resource);
        let mut builder = SdkTracerProvider::builder()
            .with_span_processor(processor)
            .with_resource(resource);
        if let Some(ratio) = settings.sample {
            builder = builder.with_sampler(Sampler::ParentBased(Box::new(
                Sampler::TraceIdRatioBased(ratio),
            )));
        }
        let provider = builder.build();
        let tracer = provider.tracer("mcpserver");
        Telemetry {
            provider,
            tracer,
            metrics: measured,
            queue,
            capture: settings.capture,
            tasks: Default::default(),
        }
    }

    pub fn tracer(&self) -> &SdkTracer {
        &self.tracer
    }

    /// What of a tool call's content its span records.
    pub fn capture(&self) -> Capture {
        self.capture
    }

    /// The spans of running tasks, to start, mark and end.
    pub fn tasks(&self) -> std::sync::MutexGuard<'_, tasks::TaskSpans> {
        self.tasks
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Hands a request's span at its end to the export thread, which
    /// finishes it and records the request's duration.
    pub fn end(&self, ending: Ending) {
        self.queue.end(ending);
    }

    /// A session lasted `seconds` (`mcp.server.session.duration`).
    pub fn session_ended(&self, seconds: f64, attributes: &[opentelemetry::KeyValue]) {
        self.metrics.session(seconds, attributes);
    }

    /// Spans exported so far, and dropped (the queue was full, or the
    /// collector refused or could not be reached).
    pub fn counts(&self) -> export::Snapshot {
        self.queue.snapshot()
    }

    /// Sends what is queued, waiting at most `timeout`.
    pub fn flush(&self, timeout: Duration) {
        self.queue.flush(timeout);
    }

    /// The server stops: the last spans are sent (waiting at most
    /// [`FLUSH_AT_STOP`]), and what was lost is said on stderr.
    pub fn finish(&self) {
        self.tasks().end_all();
        self.flush(FLUSH_AT_STOP);
        let counts = self.counts();
        if counts.dropped > 0 {
            eprintln!(
                "mcpserver: telemetry: {} spans exported, {} dropped ({} for a full queue, {} not accepted by the collector)",
                counts.exported,
                counts.dropped,
                counts.dropped_full,
                counts.dropped - counts.dropped_full
            );
        }
    }
}

impl Drop for Telemetry {
    fn drop(&mut self) {
        let _ = self
            .provider
            .shutdown_with_timeout(Duration::from_millis(100));
    }
}

/// The resource: the SDK's (which reads `OTEL_SERVICE_NAME` and
/// `OTEL_RESOURCE_ATTRIBUTES`), with R's service name over it.
fn resource(settings: &Settings) -> Resource {
    let mut builder = Resource::builder();
    if let Some(name) = &settings.service_name {
        builder = builder.with_service_name(name.clone());
    }
    builder.build()
}

/// Headers as `OTEL_EXPORTER_OTLP_HEADERS` writes them: `k1=v1,k2=v2`,
/// each key and value URL-encoded (a comma in a value is `%2C`), so the
/// text is split at commas first and each part decoded after.
pub fn parse_headers(text: &str) -> Vec<(String, String)> {
    text.split(',')
        .filter_map(|pair| pair.split_once('='))
        .map(|(k, v)| (percent_decoded(k.trim()), percent_decoded(v.trim())))
        .filter(|(k, _)| !k.is_empty())
        .collect()
}

/// One header as R hands it over, `name=value`: split at the first `=`
/// only, the value taken as it is (commas and all).
pub fn header_pair(text: &str) -> Option<(String, String)> {
    let (name, value) = text.split_once('=')?;
    let name = name.trim();
    (!name.is_empty()).then(|| (name.to_string(), value.to_string()))
}

/// `%XX` escapes decoded; an escape that is not one (or decodes to bytes
/// that are not UTF-8) is kept as written.
fn percent_decoded(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let escape = (bytes[i] == b'%')
            .then(|| text.get(i + 1..i + 3))
            .flatten()
            .and_then(|hex| u8::from_str_radix(hex, 16).ok());
        match escape {
            Some(byte) => {
                out.push(byte);
                i += 3;
            }
            None => {
                out.push(bytes[i]);
                i += 1;
            }
        }
    }
    String::from_utf8(out).unwrap_or_else(|_| text.to_string())
}
