//! Export: requests' spans at their end wait in a bounded queue, and a
//! thread of their own finishes them (attributes, status, the duration's
//! measurement: [`super::spans::Ending::finish`]) and sends them in batches
//! over OTLP/HTTP protobuf, through a small hyper client on that thread's
//! runtime; every metric export interval, and when the server stops, it
//! sends the metrics' aggregate too ([`super::metrics`]).
//!
//! Nothing here ever blocks the thread that ends a span: a span that finds
//! the queue full is dropped and counted, and a collector that is slow or
//! gone only delays the export thread (each send has a time limit).

use super::metrics::Metrics;
use super::spans::Ending;
use crate::util::threads;
use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use opentelemetry::Context;
use opentelemetry_http::{HttpClient, HttpError, Request, Response};
use opentelemetry_otlp::{Protocol, WithExportConfig, WithHttpConfig};
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::metrics::exporter::PushMetricExporter;
use opentelemetry_sdk::trace::{Span, SpanData, SpanExporter, SpanProcessor};
use opentelemetry_sdk::Resource;
use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Finished spans held for export at most; more are dropped.
pub const QUEUE_SIZE: usize = 2048;
/// Spans per export request.
const BATCH_SIZE: usize = 512;
/// A partly filled batch is sent after this long.
const BATCH_DELAY: Duration = Duration::from_millis(500);
/// One export request's time limit (connection, sending, answer).
const SEND_LIMIT: Duration = Duration::from_secs(10);
/// The largest collector answer read.
const MAX_ANSWER: usize = 64 * 1024;

/// How often the metrics are sent when `OTEL_METRIC_EXPORT_INTERVAL`
/// (milliseconds) does not say.
pub const METRIC_INTERVAL: Duration = Duration::from_secs(60);

/// The metric export interval `OTEL_METRIC_EXPORT_INTERVAL` asks for.
pub fn metric_interval(var: impl Fn(&str) -> Option<String>) -> Duration {
    var("OTEL_METRIC_EXPORT_INTERVAL")
        .and_then(|ms| ms.trim().parse::<u64>().ok())
        .filter(|ms| *ms > 0)
        .map_or(METRIC_INTERVAL, Duration::from_millis)
}

/// What the export thread is told.
enum Message {
    Span(Box<SpanData>),
    /// Requests' spans wait in [`Counts::endings`] (the first of a batch
    /// sends this, the rest wait with it: one wake-up per batch, not per
    /// span).
    Ended,
    /// Export what is queued, then say so.
    Flush(SyncSender<()>),
}

/// Counts of the spans that went out and of those lost, shared by the
/// processor and the export thread.
#[derive(Debug, Default)]
pub struct Counts {
    exported: AtomicU64,
    dropped_full: AtomicU64,
    dropped_export: AtomicU64,
    sender: Mutex<Option<SyncSender<Message>>>,
    /// Requests' spans at their end, for the export thread to finish (at
    /// most [`QUEUE_SIZE`]).
    endings: Mutex<Vec<Ending>>,
}

/// How long the export thread lets requests' spans gather once the first
/// of a batch woke it: the threads that end them (R's) then pay for one
/// wake-up per batch.
const GATHER: Duration = Duration::from_millis(2);

/// A reading of [`Counts`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Snapshot {
    pub exported: u64,
    /// All spans lost ...
    pub dropped: u64,
    /// ... of which this many found the queue full.
    pub dropped_full: u64,
}

impl Counts {
    /// Hands a request's span at its end to the export thread, never
    /// waiting: when the queue is full the span is dropped (its end, on
    /// this thread, counts it as dropped).
    pub fn end(&self, ending: Ending) {
        let mut endings = self.endings.lock().unwrap_or_else(|p| p.into_inner());
        if endings.len() >= QUEUE_SIZE {
            drop(endings);
            // Ended here (as dropping a span does), and counted if the
            // queue of finished spans is full too.
            return ending.finish(None);
        }
        let first = endings.is_empty();
        endings.push(ending);
        drop(endings);
        if first {
            let sender = self.sender.lock().ok().and_then(|s| s.clone());
            match sender {
                Some(sender) => {
                    // Full: the export thread has messages to read and will
                    // find these spans after them.
                    let _ = sender.try_send(Message::Ended);
                }
                None => self.finish_endings(None),
            }
        }
    }

    /// Finishes the spans waiting in `endings` (on the export thread).
    fn finish_endings(&self, metrics: Option<&Metrics>) {
        let taken = std::mem::take(&mut *self.endings.lock().unwrap_or_else(|p| p.into_inner()));
        for ending in taken {
            ending.finish(metrics);
        }
    }

    pub fn snapshot(&self) -> Snapshot {
        let full = self.dropped_full.load(Ordering::Relaxed);
        Snapshot {
            exported: self.exported.load(Ordering::Relaxed),
            dropped: full + self.dropped_export.load(Ordering::Relaxed),
            dropped_full: full,
        }
    }

    /// Asks the export thread to send what it holds and waits for it, at
    /// most `timeout`.
    pub fn flush(&self, timeout: Duration) {
        let Some(sender) = self.sender.lock().ok().and_then(|s| s.clone()) else {
            return;
        };
        let (done, finished) = mpsc::sync_channel(1);
        // A full queue still takes the flush: it waits its turn, within
        // the time limit.
        let deadline = std::time::Instant::now() + timeout;
        let mut message = Message::Flush(done);
        loop {
            match sender.try_send(message) {
                Ok(()) => break,
                Err(TrySendError::Full(m)) if std::time::Instant::now() < deadline => {
                    message = m;
                    std::thread::sleep(Duration::from_millis(5));
                }
                Err(_) => return,
            }
        }
        let _ =
            finished.recv_timeout(deadline.saturating_duration_since(std::time::Instant::now()));
    }
}

/// The span processor: ending a span queues it, never waiting.
#[derive(Debug)]
pub struct Batcher {
    counts: Arc<Counts>,
}

/// What the export thread sends metrics with, and how often.
pub struct MetricExport<M> {
    pub metrics: Arc<Metrics>,
    /// `None`: measurements are made but not sent.
    pub exporter: Option<M>,
    pub interval: Duration,
}

thread_local! {
    /// On the export thread, the spans it ended itself (finishing an
    /// [`Ending`]): they join the batch there, ahead of any later flush,
    /// rather than queueing behind it.
    static ENDED_HERE: RefCell<Option<Vec<SpanData>>> = const { RefCell::new(None) };
}

impl Batcher {
    /// A processor whose thread exports to `exporter` (and the metrics
    /// with `metrics`), with room for `capacity` spans, describing them as
    /// `resource`; and its counts.
    pub fn start<M: PushMetricExporter>(
        mut exporter: impl SpanExporter + 'static,
        metrics: MetricExport<M>,
        capacity: usize,
        resource: &Resource,
    ) -> (Batcher, Arc<Counts>) {
        exporter.set_resource(resource);
        let (sender, receiver) = mpsc::sync_channel(capacity);
        let counts = Arc::new(Counts {
            sender: Mutex::new(Some(sender)),
            ..Counts::default()
        });
        let thread_counts = counts.clone();
        let started = threads::spawn(
            "telemetry",
            |message| eprintln!("{}", threads::describe_panic("telemetry", &message)),
            move || export_loop(exporter, metrics, receiver, &thread_counts),
        );
        if let Err(e) = started {
            eprintln!("mcpserver: telemetry is off: its export thread could not start: {e}");
            *counts.sender.lock().unwrap_or_else(|p| p.into_inner()) = None;
        }
        (
            Batcher {
                counts: counts.clone(),
            },
            counts,
        )
    }
}

impl SpanProcessor for Batcher {
    fn on_start(&self, _span: &mut Span, _cx: &Context) {}

    fn on_end(&self, span: SpanData) {
        if !span.span_context.is_sampled() {
            return;
        }
        // On the export thread (a span it ended itself), straight into
        // its batch.
        let mut span = Some(span);
        ENDED_HERE.with(|here| {
            if let Some(batch) = here.borrow_mut().as_mut() {
                batch.extend(span.take());
            }
        });
        let Some(span) = span else {
            return;
        };
        let sender = self.counts.sender.lock().ok().and_then(|s| s.clone());
        let sent = match sender {
            Some(sender) => sender.try_send(Message::Span(Box::new(span))).is_ok(),
            None => false,
        };
        if !sent {
            self.counts.dropped_full.fetch_add(1, Ordering::Relaxed);
        }
    }

    fn force_flush(&self) -> OTelSdkResult {
        self.counts.flush(SEND_LIMIT);
        Ok(())
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        self.counts.flush(timeout);
        // The thread ends when the last sender goes.
        if let Ok(mut sender) = self.counts.sender.lock() {
            sender.take();
        }
        Ok(())
    }

    fn set_resource(&mut self, _resource: &Resource) {}
}

/// The export thread: finishes the spans of requests, gathers batches and
/// sends them, and the metrics every interval, on a runtime of its own
/// (the hyper client needs one), until every sender is gone.
fn export_loop<M: PushMetricExporter>(
    exporter: impl SpanExporter,
    metrics: MetricExport<M>,
    receiver: Receiver<Message>,
    counts: &Counts,
) {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("mcpserver: telemetry is off: no runtime for its export: {e}");
            return;
        }
    };
    ENDED_HERE.with(|here| *here.borrow_mut() = Some(Vec::new()));
    let mut batch: Vec<SpanData> = Vec::with_capacity(BATCH_SIZE);
    let mut batch_due: Option<Instant> = None;
    let mut metrics_due = metrics
        .exporter
        .as_ref()
        .map(|_| Instant::now() + metrics.interval);
    loop {
        let due = [batch_due, metrics_due].into_iter().flatten().min();
        let message = match due {
            None => receiver.recv().map_err(|_| RecvTimeoutError::Disconnected),
            Some(due) => receiver.recv_timeout(due.saturating_duration_since(Instant::now())),
        };
        let mut flush = false;
        match message {
            Ok(Message::Span(span)) => batch.push(*span),
            Ok(Message::Ended) => {
                std::thread::sleep(GATHER);
                finish_endings(counts, &metrics, &mut batch);
            }
            Ok(Message::Flush(done)) => {
                finish_endings(counts, &metrics, &mut batch);
                send(&runtime, &exporter, &mut batch, counts);
                send_metrics(&runtime, &metrics);
                let _ = done.try_send(());
            }
            Err(RecvTimeoutError::Timeout) => flush = true,
            Err(RecvTimeoutError::Disconnected) => {
                finish_endings(counts, &metrics, &mut batch);
                send(&runtime, &exporter, &mut batch, counts);
                send_metrics(&runtime, &metrics);
                let _ = exporter.shutdown();
                return;
            }
        }
        let now = Instant::now();
        if batch.is_empty() {
            batch_due = None;
        } else if batch.len() >= BATCH_SIZE || (flush && batch_due.is_some_and(|d| d <= now)) {
            send(&runtime, &exporter, &mut batch, counts);
            batch_due = None;
        } else if batch_due.is_none() {
            batch_due = Some(now + BATCH_DELAY);
        }
        if metrics_due.is_some_and(|d| d <= now) {
            send_metrics(&runtime, &metrics);
            metrics_due = Some(now + metrics.interval);
        }
    }
}

/// Finishes the requests' spans that wait, into `batch`.
fn finish_endings<M>(counts: &Counts, metrics: &MetricExport<M>, batch: &mut Vec<SpanData>) {
    counts.finish_endings(Some(&metrics.metrics));
    ENDED_HERE.with(|here| {
        if let Some(ended) = here.borrow_mut().as_mut() {
            batch.append(ended);
        }
    });
}

/// Sends the metrics' aggregate so far (cumulative), if there is any and
/// an exporter to send it with.
fn send_metrics<M: PushMetricExporter>(
    runtime: &tokio::runtime::Runtime,
    metrics: &MetricExport<M>,
) {
    let Some(exporter) = &metrics.exporter else {
        return;
    };
    let Some(aggregate) = metrics.metrics.collect() else {
        return;
    };
    let _ = runtime
        .block_on(async { tokio::time::timeout(SEND_LIMIT, exporter.export(&aggregate)).await });
}

fn send(
    runtime: &tokio::runtime::Runtime,
    exporter: &impl SpanExporter,
    batch: &mut Vec<SpanData>,
    counts: &Counts,
) {
    if batch.is_empty() {
        return;
    }
    let spans = std::mem::take(batch);
    let n = spans.len() as u64;
    let outcome =
        runtime.block_on(async { tokio::time::timeout(SEND_LIMIT, exporter.export(spans)).await });
    match outcome {
        Ok(Ok(())) => counts.exported.fetch_add(n, Ordering::Relaxed),
        _ => counts.dropped_export.fetch_add(n, Ordering::Relaxed),
    };
}

/// The variables that choose the encoding of OTLP/HTTP, per signal and for
/// all of them (the signal's first).
pub const TRACES_PROTOCOL: &str = "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL";
pub const METRICS_PROTOCOL: &str = "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL";
pub const PROTOCOL: &str = "OTEL_EXPORTER_OTLP_PROTOCOL";

/// The encoding `signal_var`, else [`PROTOCOL`], asks for: `http/protobuf`
/// (also when neither is set) or `http/json`. `grpc` is not spoken here: it
/// is said on stderr and protobuf over HTTP is used, as for any value not
/// known. Chosen here rather than by the crate, whose default is JSON once
/// its JSON encoding is compiled in, where the specification's is protobuf.
pub fn protocol(signal_var: &str, var: impl Fn(&str) -> Option<String>) -> Protocol {
    let Some((name, value)) = [signal_var, PROTOCOL]
        .into_iter()
        .find_map(|name| var(name).map(|v| (name, v.trim().to_ascii_lowercase())))
        .filter(|(_, v)| !v.is_empty())
    else {
        return Protocol::HttpBinary;
    };
    match value.as_str() {
        "http/json" => Protocol::HttpJson,
        "http/protobuf" => Protocol::HttpBinary,
        other => {
            eprintln!(
                "mcpserver: telemetry: {name}={other} is not supported (only http/protobuf and http/json); sending http/protobuf"
            );
            Protocol::HttpBinary
        }
    }
}

/// The OTLP/HTTP exporter: to `endpoint` (a base, `/v1/traces` is
/// appended) with `headers`, or else as the environment says, in protobuf
/// or JSON ([`protocol`]).
pub fn otlp_exporter(
    endpoint: Option<&str>,
    headers: HashMap<String, String>,
) -> Result<opentelemetry_otlp::SpanExporter, String> {
    let encoding = protocol(TRACES_PROTOCOL, |name| std::env::var(name).ok());
    let mut builder = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_http_client(Hyper)
        .with_protocol(encoding)
        .with_timeout(SEND_LIMIT);
    if let Some(endpoint) = endpoint {
        builder = builder.with_endpoint(format!("{}/v1/traces", endpoint.trim_end_matches('/')));
    }
    if !headers.is_empty() {
        builder = builder.with_headers(headers);
    }
    builder.build().map_err(|e| e.to_string())
}

/// The OTLP/HTTP metric exporter: to `endpoint` (a base, `/v1/metrics` is
/// appended) with `headers`, or else as the environment says
/// (`OTEL_EXPORTER_OTLP_METRICS_ENDPOINT`, then
/// `OTEL_EXPORTER_OTLP_ENDPOINT`), in protobuf or JSON ([`protocol`]).
pub fn otlp_metric_exporter(
    endpoint: Option<&str>,
    headers: HashMap<String, String>,
) -> Result<opentelemetry_otlp::MetricExporter, String> {
    let encoding = protocol(METRICS_PROTOCOL, |name| std::env::var(name).ok());
    let mut builder = opentelemetry_otlp::MetricExporter::builder()
        .with_http()
        .with_http_client(Hyper)
        .with_protocol(encoding)
        .with_timeout(SEND_LIMIT)
        .with_temporality(opentelemetry_sdk::metrics::Temporality::Cumulative);
    if let Some(endpoint) = endpoint {
        builder = builder.with_endpoint(format!("{}/v1/metrics", endpoint.trim_end_matches('/')));
    }
    if !headers.is_empty() {
        builder = builder.with_headers(headers);
    }
    builder.build().map_err(|e| e.to_string())
}

/// The HTTP client the exporter sends with: one connection per request
/// (a batch at most every half second), plain HTTP only.
#[derive(Debug)]
struct Hyper;

#[async_trait::async_trait]
impl HttpClient for Hyper {
    async fn send_bytes(&self, request: Request<Bytes>) -> Result<Response<Bytes>, HttpError> {
        let uri = request.uri().clone();
        if uri.scheme_str() != Some("http") {
            return Err(format!(
                "telemetry is sent over plain HTTP only (to a local collector); not to {uri}"
            )
            .into());
        }
        let host = uri.host().ok_or("the endpoint has no host")?.to_string();
        let port = uri.port_u16().unwrap_or(80);
        let stream = tokio::net::TcpStream::connect((host.as_str(), port)).await?;
        let _ = stream.set_nodelay(true);
        let io = hyper_util::rt::TokioIo::new(stream);
        let (mut sender, connection) = hyper::client::conn::http1::handshake(io).await?;
        let connection = tokio::spawn(connection);
        let (mut parts, body) = request.into_parts();
        // Sent to the collector itself (origin form), not to a proxy.
        let path = uri.path_and_query().map_or("/", |p| p.as_str());
        parts.uri = path.parse()?;
        // An HTTP/1.1 request names its host.
        if !parts.headers.contains_key(hyper::header::HOST) {
            if let Ok(value) = hyper::header::HeaderValue::from_str(&host) {
                parts.headers.insert(hyper::header::HOST, value);
            }
        }
        let request = hyper::Request::from_parts(parts, Full::new(body));
        let answer = sender.send_request(request).await;
        let result = match answer {
            Ok(response) => {
                let (parts, body) = response.into_parts();
                let body = Limited::new(body, MAX_ANSWER)
                    .collect()
                    .await
                    .map(|b| b.to_bytes())
                    .unwrap_or_default();
                Ok(Response::from_parts(parts, body))
            }
            Err(e) => Err(e.into()),
        };
        connection.abort();
        result
    }
}
