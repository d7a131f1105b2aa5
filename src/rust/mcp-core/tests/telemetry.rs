//! Telemetry: the SERVER span of each request, as the OpenTelemetry
//! semantic conventions for MCP describe it (name, attributes, status,
//! parent), and the bounded export queue that never waits.

mod common;

use common::harness::Harness;
use common::{done_text, initialize_request};
use mcp_core::engine::registry::Registry;
use mcp_core::engine::result::ToolResult;
use mcp_core::engine::{Config, Engine, Outcome};
use mcp_core::protocol::tool::ToolDef;
use mcp_core::telemetry::export::Batcher;
use mcp_core::telemetry::{self, Peer, Settings, Telemetry, Transport};
use opentelemetry::trace::{SpanKind, Status, TraceContextExt};
use opentelemetry::Value as OtelValue;
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::metrics::data::{AggregatedMetrics, MetricData, ResourceMetrics};
use opentelemetry_sdk::metrics::exporter::PushMetricExporter;
use opentelemetry_sdk::metrics::Temporality;
use opentelemetry_sdk::trace::{SpanData, SpanExporter};
use serde_json::json;
use std::sync::{Arc, Mutex};
use std::time::Duration;

const PARENT_TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const PARENT_SPAN: &str = "00f067aa0ba902b7";

/// An exporter that keeps what it is given.
#[derive(Debug, Clone, Default)]
struct Kept(Arc<Mutex<Vec<SpanData>>>);

impl SpanExporter for Kept {
    async fn export(&self, batch: Vec<SpanData>) -> OTelSdkResult {
        self.0.lock().unwrap().extend(batch);
        Ok(())
    }
}

/// An exporter that never finishes (a collector that hangs).
#[derive(Debug)]
struct Stuck;

impl SpanExporter for Stuck {
    async fn export(&self, _batch: Vec<SpanData>) -> OTelSdkResult {
        std::future::pending::<()>().await;
        Ok(())
    }
}

/// One histogram data point as an export carried it.
#[derive(Debug, Clone)]
struct Point {
    metric: String,
    unit: String,
    attributes: Vec<(String, String)>,
    bounds: Vec<f64>,
    count: u64,
}

impl Point {
    fn get(&self, key: &str) -> Option<&str> {
        self.attributes
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}

/// A metric exporter that keeps the histogram points of its last export
/// (cumulative: the totals so far).
#[derive(Debug, Clone, Default)]
struct KeptMetrics(Arc<Mutex<Vec<Point>>>);

impl PushMetricExporter for KeptMetrics {
    async fn export(&self, metrics: &ResourceMetrics) -> OTelSdkResult {
        let mut points = Vec::new();
        for scope in metrics.scope_metrics() {
            for metric in scope.metrics() {
                let AggregatedMetrics::F64(MetricData::Histogram(h)) = metric.data() else {
                    continue;
                };
                for p in h.data_points() {
                    points.push(Point {
                        metric: metric.name().to_string(),
                        unit: metric.unit().to_string(),
                        attributes: p
                            .attributes()
                            .map(|kv| (kv.key.to_string(), kv.value.as_str().into_owned()))
                            .collect(),
                        bounds: p.bounds().collect(),
                        count: p.count(),
                    });
                }
            }
        }
        *self.0.lock().unwrap() = points;
        Ok(())
    }

    fn force_flush(&self) -> OTelSdkResult {
        Ok(())
    }

    fn shutdown_with_timeout(&self, _timeout: Duration) -> OTelSdkResult {
        Ok(())
    }

    fn temporality(&self) -> Temporality {
        Temporality::Cumulative
    }
}

fn tools() -> Vec<ToolDef> {
    let add = ToolDef {
        name: "add".into(),
        input_schema: json!({"type":"object","properties":{"x":{"type":"number"}}}),
        ..ToolDef::default()
    };
    let slow = ToolDef {
        name: "slow".into(),
        task_support: mcp_core::protocol::tool::TaskSupport::Optional,
        ..add.clone()
    };
    vec![add, slow]
}

struct Traced {
    h: Harness,
    telemetry: Arc<Telemetry>,
    kept: Kept,
}

impl Traced {
    fn new(peer: Peer) -> Traced {
        let kept = Kept::default();
        let telemetry = Arc::new(Telemetry::with_exporter(&Settings::default(), kept.clone()));
        let config = Config {
            telemetry: Some(telemetry.clone()),
            ..Config::default()
        };
        let engine = Engine::new(Arc::new(config), Arc::new(Registry::new(tools()).unwrap()))
            .with_peer(peer);
        Traced {
            h: Harness::on(engine),
            telemetry,
            kept,
        }
    }

    fn initialized(peer: Peer) -> Traced {
        let mut t = Traced::new(peer);
        t.h.request(initialize_request("2025-11-25", json!({})));
        t.h.send(json!({"jsonrpc":"2.0","method":"notifications/initialized"}));
        t
    }

    /// The spans exported so far.
    fn spans(&self) -> Vec<SpanData> {
        self.telemetry.flush(Duration::from_secs(5));
        self.kept.0.lock().unwrap().clone()
    }

    fn span(&self, name: &str) -> SpanData {
        let spans = self.spans();
        spans
            .iter()
            .find(|s| s.name == name)
            .cloned()
            .unwrap_or_else(|| {
                let names: Vec<_> = spans.iter().map(|s| s.name.to_string()).collect();
                panic!("no span {name:?} among {names:?}")
            })
    }
}

fn attribute(span: &SpanData, key: &str) -> Option<OtelValue> {
    span.attributes
        .iter()
        .find(|kv| kv.key.as_str() == key)
        .map(|kv| kv.value.clone())
}

fn text(span: &SpanData, key: &str) -> String {
    match attribute(span, key) {
        Some(value) => value.as_str().into_owned(),
        None => panic!("span {:?} has no {key}: {:?}", span.name, span.attributes),
    }
}

fn call(id: u64, meta: serde_json::Value) -> serde_json::Value {
    json!({"jsonrpc":"2.0","id":id,"method":"tools/call",
           "params":{"name":"add","arguments":{"x":1},"_meta":meta}})
}

#[test]
fn a_tool_call_is_a_server_span_named_for_its_tool_and_child_of_the_meta_traceparent() {
    let mut t = Traced::initialized(Peer::default());
    let traceparent = format!("00-{PARENT_TRACE}-{PARENT_SPAN}-01");
    t.h.send(call(
        7,
        json!({"traceparent": traceparent, "tracestate": "vendor=x"}),
    ));
    let job = t.h.jobs.remove(0);
    t.h.complete(job.id, done_text("2"));
    let span = t.span("tools/call add");
    assert_eq!(span.span_kind, SpanKind::Server);
    assert_eq!(span.span_context.trace_id().to_string(), PARENT_TRACE);
    assert_eq!(span.parent_span_id.to_string(), PARENT_SPAN);
    assert!(span.parent_span_is_remote);
    assert_eq!(text(&span, "mcp.method.name"), "tools/call");
    assert_eq!(text(&span, "gen_ai.tool.name"), "add");
    assert_eq!(text(&span, "gen_ai.operation.name"), "execute_tool");
    assert_eq!(text(&span, "jsonrpc.request.id"), "7");
    assert_eq!(text(&span, "mcp.protocol.version"), "2025-11-25");
    assert_eq!(text(&span, "network.transport"), "pipe");
    assert!(attribute(&span, "error.type").is_none());
    assert_eq!(span.status, Status::Unset);
    assert_eq!(span.span_context.trace_state().header(), "vendor=x");
    // No argument or result lands in the span.
    let all = format!("{:?}", span.attributes);
    assert!(!all.contains("\"x\""), "{all}");
}

#[test]
fn without_a_traceparent_a_span_starts_a_trace_of_its_own() {
    let mut t = Traced::initialized(Peer::default());
    t.h.request(json!({"jsonrpc":"2.0","id":"list-1","method":"tools/list"}));
    let span = t.span("tools/list");
    assert!(!span.parent_span_is_remote);
    assert_eq!(span.parent_span_id.to_string(), "0000000000000000");
    assert_eq!(text(&span, "jsonrpc.request.id"), "list-1");
    // `initialize` has its span too, with the revision it settled on.
    let init = t.span("initialize");
    assert_eq!(text(&init, "mcp.protocol.version"), "2025-11-25");
}

#[test]
fn a_malformed_traceparent_is_ignored() {
    let mut t = Traced::initialized(Peer::default());
    t.h.send(call(1, json!({"traceparent": "00-zz-yy-01"})));
    let job = t.h.jobs.remove(0);
    t.h.complete(job.id, done_text("2"));
    let span = t.span("tools/call add");
    assert!(!span.parent_span_is_remote);
}

#[test]
fn a_tool_error_is_error_type_tool_error_with_error_status() {
    let mut t = Traced::initialized(Peer::default());
    t.h.send(call(3, json!({})));
    let job = t.h.jobs.remove(0);
    t.h.complete(job.id, Outcome::Done(ToolResult::error("no")));
    let span = t.span("tools/call add");
    assert_eq!(text(&span, "error.type"), "tool_error");
    assert!(matches!(span.status, Status::Error { .. }));
}

#[test]
fn a_json_rpc_error_is_its_code_as_error_type() {
    let mut t = Traced::initialized(Peer::default());
    t.h.request(json!({"jsonrpc":"2.0","id":4,"method":"no/such"}));
    let span = t.span("no/such");
    assert_eq!(text(&span, "error.type"), "-32601");
    match &span.status {
        Status::Error { description } => {
            assert!(description.contains("not found"), "{description}")
        }
        other => panic!("status {other:?}"),
    }
}

#[test]
fn a_cancelled_call_ends_its_span_with_an_event() {
    let mut t = Traced::initialized(Peer::default());
    t.h.send(call(5, json!({})));
    let job = t.h.jobs.remove(0);
    t.h.send(json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5}}));
    t.h.complete(job.id, Outcome::Cancelled);
    let span = t.span("tools/call add");
    let events: Vec<_> = span.events.iter().map(|e| e.name.to_string()).collect();
    assert!(events.contains(&"cancelled".to_string()), "{events:?}");
    assert_eq!(text(&span, "error.type"), "cancelled");
}

#[test]
fn a_time_limit_is_an_event_on_the_span() {
    let mut t = Traced::initialized(Peer::default());
    t.h.send(call(6, json!({})));
    let job = t.h.jobs.remove(0);
    t.h.complete(job.id, Outcome::TimedOut(Duration::from_secs(2)));
    let span = t.span("tools/call add");
    let events: Vec<_> = span.events.iter().map(|e| e.name.to_string()).collect();
    assert!(
        events.contains(&"time limit reached".to_string()),
        "{events:?}"
    );
    assert_eq!(text(&span, "error.type"), "tool_error");
}

#[test]
fn http_spans_name_the_client_address_and_session() {
    let peer = Peer {
        transport: Transport::Tcp,
        address: Some("127.0.0.1:54321".parse().unwrap()),
        session: None,
    };
    let mut t = Traced::initialized(peer);
    t.h.engine.set_session_id("abc123");
    t.h.request(
        json!({"jsonrpc":"2.0","id":9,"method":"resources/read","params":{"uri":"file:///x"}}),
    );
    let span = t.span("resources/read");
    assert_eq!(text(&span, "network.transport"), "tcp");
    assert_eq!(text(&span, "client.address"), "127.0.0.1");
    assert_eq!(attribute(&span, "client.port"), Some(OtelValue::I64(54321)));
    assert_eq!(text(&span, "mcp.session.id"), "abc123");
    assert_eq!(text(&span, "mcp.resource.uri"), "file:///x");
}

#[test]
fn a_modern_request_names_the_envelopes_revision() {
    let mut t = Traced::new(Peer::default());
    t.h.request(
        json!({"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"greet","_meta":{
        "io.modelcontextprotocol/protocolVersion":"2026-07-28",
        "io.modelcontextprotocol/clientCapabilities":{}}}}),
    );
    let span = t.span("prompts/get greet");
    assert_eq!(text(&span, "gen_ai.prompt.name"), "greet");
    assert_eq!(text(&span, "mcp.protocol.version"), "2026-07-28");
}

#[test]
fn the_span_context_of_a_running_call_is_known_to_the_engine() {
    let mut t = Traced::initialized(Peer::default());
    let traceparent = format!("00-{PARENT_TRACE}-{PARENT_SPAN}-01");
    t.h.send(call(8, json!({"traceparent": traceparent})));
    let id = mcp_core::protocol::jsonrpc::RequestId::from_raw(
        &serde_json::value::RawValue::from_string("8".into()).unwrap(),
    )
    .unwrap();
    let (trace, span) = t.h.engine.trace_ids(&id).expect("a span in flight");
    assert_eq!(trace, PARENT_TRACE);
    assert_ne!(span, PARENT_SPAN);
}

#[test]
fn a_full_queue_drops_spans_and_counts_them_without_waiting() {
    use opentelemetry::trace::{Tracer as _, TracerProvider as _};
    let (processor, counts) = Batcher::start(
        Stuck,
        mcp_core::telemetry::export::MetricExport {
            metrics: Arc::new(mcp_core::telemetry::metrics::Metrics::new(
                opentelemetry_sdk::Resource::builder_empty().build(),
            )),
            exporter: None::<KeptMetrics>,
            interval: Duration::from_secs(60),
        },
        4,
        &opentelemetry_sdk::Resource::builder_empty().build(),
    );
    let provider = opentelemetry_sdk::trace::SdkTracerProvider::builder()
        .with_span_processor(processor)
        .build();
    let tracer = provider.tracer("t");
    // The export thread takes at most one batch (512 spans) and then never
    // returns from the exporter; four more spans fit in the queue, and
    // every other one is dropped at once. Were ending a span to wait for
    // room, this loop would never finish.
    for _ in 0..2000 {
        tracer.in_span("s", |cx| assert!(cx.span().span_context().is_valid()));
    }
    let snapshot = counts.snapshot();
    assert!(snapshot.dropped_full >= 2000 - 512 - 4, "{snapshot:?}");
    assert_eq!(snapshot.dropped, snapshot.dropped_full);
    assert_eq!(snapshot.exported, 0);
    std::mem::forget(provider); // its shutdown would wait for the stuck export
}

#[test]
fn telemetry_is_on_when_asked_or_an_endpoint_is_set_unless_the_sdk_is_disabled() {
    let env = fake_env;
    let asked = Settings {
        requested: true,
        ..Settings::default()
    };
    assert!(!Settings::default().enabled(env(&[])));
    assert!(asked.enabled(env(&[])));
    assert!(Settings::default().enabled(env(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318")])));
    assert!(Settings::default().enabled(env(&[(
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
        "http://c:4318/v1/traces"
    )])));
    assert!(!asked.enabled(env(&[("OTEL_SDK_DISABLED", "true")])));
    assert!(Settings::default().enabled(env(&[(
        "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
        "http://c:4318/v1/metrics"
    )])));
    assert_eq!(
        telemetry::parse_headers("api-key=abc, x-team = ds"),
        vec![
            ("api-key".to_string(), "abc".to_string()),
            ("x-team".to_string(), "ds".to_string())
        ]
    );
}

#[test]
fn header_values_are_url_decoded_after_the_split_at_commas() {
    let pair = |k: &str, v: &str| (k.to_string(), v.to_string());
    assert_eq!(
        telemetry::parse_headers("authorization=Basic%20a%2Cb%3D,x-list=1%2C2,bad=%zz%4"),
        vec![
            pair("authorization", "Basic a,b="),
            pair("x-list", "1,2"),
            pair("bad", "%zz%4"),
        ]
    );
    // From R a value is taken as it is: commas, `=` and `%` included.
    assert_eq!(
        telemetry::header_pair("x-list=1,2=3%2C"),
        Some(pair("x-list", "1,2=3%2C"))
    );
    assert_eq!(telemetry::header_pair("novalue"), None);
}

#[test]
fn without_telemetry_the_engine_keeps_no_spans() {
    let mut h = Harness::new(Config::default(), Registry::new(tools()).unwrap());
    h.request(initialize_request("2025-11-25", json!({})));
    h.send(call(
        1,
        json!({"traceparent": format!("00-{PARENT_TRACE}-{PARENT_SPAN}-01")}),
    ));
    let id = mcp_core::protocol::jsonrpc::RequestId::from_raw(
        &serde_json::value::RawValue::from_string("1".into()).unwrap(),
    )
    .unwrap();
    assert!(h.engine.trace_ids(&id).is_none());
}

#[test]
fn operations_and_sessions_are_histograms_with_the_conventions_buckets_and_attributes() {
    let kept = Kept::default();
    let metrics = KeptMetrics::default();
    let telemetry = Arc::new(Telemetry::with_exporters(
        &Settings::default(),
        kept.clone(),
        Some(metrics.clone()),
        Duration::from_secs(3600),
    ));
    let config = Config {
        telemetry: Some(telemetry.clone()),
        ..Config::default()
    };
    let engine = Engine::new(Arc::new(config), Arc::new(Registry::new(tools()).unwrap()));
    let mut h = Harness::on(engine);
    h.request(initialize_request("2025-11-25", json!({})));
    h.send(json!({"jsonrpc":"2.0","method":"notifications/initialized"}));
    for id in [1, 2] {
        h.send(call(id, json!({})));
        let job = h.jobs.remove(0);
        h.complete(job.id, done_text("2"));
    }
    h.send(call(3, json!({})));
    let job = h.jobs.remove(0);
    h.complete(job.id, Outcome::Done(ToolResult::error("no")));
    h.request(json!({"jsonrpc":"2.0","id":4,"method":"no/such"}));
    h.engine.end_session();
    telemetry.flush(Duration::from_secs(5));
    let points = metrics.0.lock().unwrap().clone();
    let of = |metric: &str, pick: &dyn Fn(&Point) -> bool| -> Vec<Point> {
        points
            .iter()
            .filter(|p| p.metric == metric && pick(p))
            .cloned()
            .collect()
    };
    let operation = "mcp.server.operation.duration";
    let calls = of(operation, &|p| {
        p.get("gen_ai.tool.name") == Some("add") && p.get("error.type").is_none()
    });
    assert_eq!(calls.len(), 1, "{points:?}");
    let ok = &calls[0];
    assert_eq!(ok.count, 2);
    assert_eq!(ok.unit, "s");
    assert_eq!(ok.bounds, mcp_core::telemetry::metrics::BUCKETS.to_vec());
    assert_eq!(ok.get("mcp.method.name"), Some("tools/call"));
    assert_eq!(ok.get("gen_ai.operation.name"), Some("execute_tool"));
    assert_eq!(ok.get("network.transport"), Some("pipe"));
    assert_eq!(ok.get("mcp.protocol.version"), Some("2025-11-25"));
    // Ids stay out of metrics (their cardinality has no bound).
    assert!(ok.get("jsonrpc.request.id").is_none());
    let failed = of(operation, &|p| p.get("error.type") == Some("tool_error"));
    assert_eq!(failed.len(), 1);
    assert_eq!(failed[0].count, 1);
    let unknown = of(operation, &|p| p.get("mcp.method.name") == Some("no/such"));
    assert_eq!(unknown[0].get("error.type"), Some("-32601"));
    assert_eq!(unknown[0].get("rpc.response.status_code"), Some("-32601"));
    let init = of(operation, &|p| {
        p.get("mcp.method.name") == Some("initialize")
    });
    assert_eq!(init[0].get("mcp.protocol.version"), Some("2025-11-25"));
    let sessions = of("mcp.server.session.duration", &|_| true);
    assert_eq!(sessions.len(), 1, "{points:?}");
    assert_eq!(sessions[0].count, 1);
    assert_eq!(
        sessions[0].bounds,
        mcp_core::telemetry::metrics::BUCKETS.to_vec()
    );
    assert_eq!(sessions[0].get("mcp.protocol.version"), Some("2025-11-25"));
    assert_eq!(sessions[0].get("network.transport"), Some("pipe"));
}

#[test]
fn the_verdict_reads_the_engines_responses_without_parsing_results() {
    use mcp_core::telemetry::spans::{verdict, Verdict};
    let ok = r#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"],\"isError\":true"}],"isError":false}}"#;
    assert_eq!(verdict(ok, "7"), Verdict::Ok);
    let failed = r#"{"jsonrpc":"2.0","id":"a","result":{"content":[],"isError":true}}"#;
    assert_eq!(verdict(failed, "\"a\""), Verdict::ToolError);
    let error = r#"{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"bad"}}"#;
    assert_eq!(verdict(error, "7"), Verdict::RpcError(-32602, "bad".into()));
    let list = r#"{"jsonrpc":"2.0","id":7,"result":{"tools":[]}}"#;
    assert_eq!(verdict(list, "7"), Verdict::Ok);
    // Another shape is parsed whole.
    let other = r#"{"id":7,"jsonrpc":"2.0","error":{"code":-1,"message":"m"}}"#;
    assert_eq!(verdict(other, "7"), Verdict::RpcError(-1, "m".into()));
}

#[test]
fn progress_input_requests_and_answers_are_events_on_the_calls_span() {
    let mut t = Traced::initialized(Peer::default());
    t.h.send(call(10, json!({"progressToken": "p"})));
    let job = t.h.jobs.remove(0);
    let mut out = Vec::new();
    let update = mcp_core::engine::Progress {
        progress: 1.0,
        total: Some(4.0),
        message: None,
    };
    t.h.engine
        .on_progress(job.id, update, std::time::Instant::now(), &mut out);
    t.h.collect(out);
    ask_and_accept(&mut t, job.id);
    t.h.complete(job.id, done_text("2"));
    let span = t.span("tools/call add");
    let event = |name: &str| {
        span.events
            .iter()
            .find(|e| e.name == name)
            .unwrap_or_else(|| panic!("no event {name} among {:?}", span.events))
            .clone()
    };
    let value = |e: &opentelemetry::trace::Event, key: &str| {
        e.attributes
            .iter()
            .find(|kv| kv.key.as_str() == key)
            .map(|kv| kv.value.clone())
    };
    let progress = event("progress");
    assert_eq!(value(&progress, "mcp.progress"), Some(OtelValue::F64(1.0)));
    assert_eq!(
        value(&progress, "mcp.progress.total"),
        Some(OtelValue::F64(4.0))
    );
    let requested = event("input requested");
    assert_eq!(
        value(&requested, "mcp.input_requests.methods"),
        Some(OtelValue::from("elicitation/create"))
    );
    let answered = event("input answered");
    assert_eq!(
        value(&answered, "mcp.input_request.answered"),
        Some(OtelValue::Bool(true))
    );
}

#[test]
fn the_http_requests_own_traceparent_is_a_link_and_the_meta_one_the_parent() {
    let mut t = Traced::initialized(Peer::default());
    let ambient_trace = "0af7651916cd43dd8448eb211c80319c";
    let ambient_span = "b7ad6b7169203331";
    t.h.engine.set_ambient(Some(telemetry::Ambient {
        traceparent: format!("00-{ambient_trace}-{ambient_span}-01"),
        tracestate: None,
    }));
    t.h.send(call(
        11,
        json!({"traceparent": format!("00-{PARENT_TRACE}-{PARENT_SPAN}-01")}),
    ));
    t.h.engine.set_ambient(None);
    let job = t.h.jobs.remove(0);
    t.h.complete(job.id, done_text("2"));
    let span = t.span("tools/call add");
    assert_eq!(span.parent_span_id.to_string(), PARENT_SPAN);
    let links: Vec<_> = span.links.iter().collect();
    assert_eq!(links.len(), 1, "{links:?}");
    assert_eq!(links[0].span_context.trace_id().to_string(), ambient_trace);
    assert_eq!(links[0].span_context.span_id().to_string(), ambient_span);
    // The next request, without one, has no link.
    t.h.request(json!({"jsonrpc":"2.0","id":12,"method":"tools/list"}));
    assert_eq!(t.span("tools/list").links.len(), 0);
}

#[test]
fn the_call_context_names_the_calls_span_and_a_child_span_is_its_child() {
    let mut t = Traced::initialized(Peer::default());
    t.h.send(call(
        13,
        json!({"traceparent": format!("00-{PARENT_TRACE}-{PARENT_SPAN}-01")}),
    ));
    let job = t.h.jobs.remove(0);
    let ids = job.context.trace.clone().expect("the call's span");
    assert_eq!(ids.trace_id(), PARENT_TRACE);
    let mut children = mcp_core::telemetry::children::Children::default();
    use mcp_core::telemetry::children::Value as V;
    assert!(children.open(
        &t.telemetry,
        &ids,
        "outer".into(),
        vec![("n".into(), V::Int(3))]
    ));
    assert!(children.open(&t.telemetry, &ids, "inner".into(), Vec::new()));
    assert!(children.annotate(vec![("ok".into(), V::Bool(true))], None));
    children.close(Some("boom".into()));
    children.close(None);
    assert!(children.is_empty());
    let mut out = Vec::new();
    t.h.engine.on_span_annotate(
        job.id,
        vec![opentelemetry::KeyValue::new("rows", 5_i64)],
        None,
    );
    t.h.collect(std::mem::take(&mut out));
    t.h.complete(job.id, done_text("2"));
    let call_span = t.span("tools/call add");
    assert_eq!(attribute(&call_span, "rows"), Some(OtelValue::I64(5)));
    let outer = t.span("outer");
    let inner = t.span("inner");
    assert_eq!(outer.span_kind, SpanKind::Internal);
    assert_eq!(outer.parent_span_id, call_span.span_context.span_id());
    assert_eq!(inner.parent_span_id, outer.span_context.span_id());
    assert_eq!(inner.span_context.trace_id().to_string(), PARENT_TRACE);
    assert_eq!(attribute(&outer, "n"), Some(OtelValue::I64(3)));
    assert_eq!(attribute(&inner, "ok"), Some(OtelValue::Bool(true)));
    assert_eq!(text(&inner, "error.type"), "r_error");
    assert!(matches!(inner.status, Status::Error { .. }));
    assert_eq!(outer.status, Status::Unset);
}

#[test]
fn captured_text_is_bounded_at_a_character_boundary() {
    use mcp_core::telemetry::spans::{bounded, CAPTURE_LIMIT, TRUNCATED};
    assert_eq!(bounded("{\"x\":1}"), "{\"x\":1}");
    let long = "é".repeat(CAPTURE_LIMIT); // two bytes each
    let cut = bounded(&long);
    assert!(cut.ends_with(TRUNCATED));
    let kept = cut.strip_suffix(TRUNCATED).unwrap();
    assert!(kept.len() <= CAPTURE_LIMIT && kept.len() > CAPTURE_LIMIT - 2);
    assert!(kept.chars().all(|c| c == 'é'));
}

#[test]
fn result_text_is_the_result_as_written() {
    use mcp_core::telemetry::spans::result_text;
    let written = r#"{"jsonrpc":"2.0","id":"a","result":{"content":[{"type":"text","text":"}"}],"isError":false}}"#;
    assert_eq!(
        result_text(written, "\"a\"").unwrap(),
        r#"{"content":[{"type":"text","text":"}"}],"isError":false}"#
    );
    // Another shape is parsed.
    let other = r#"{"id":1,"jsonrpc":"2.0","result":{"ok":true}}"#;
    assert_eq!(result_text(other, "1").unwrap(), r#"{"ok":true}"#);
    assert!(result_text(r#"{"jsonrpc":"2.0","id":1,"error":{"code":1}}"#, "1").is_none());
}

#[test]
fn a_task_has_a_span_of_its_own_from_creation_to_end_with_its_statuses() {
    let mut t = Traced::new(Peer::default());
    t.h.request(initialize_request("2025-11-25", json!({"elicitation":{}})));
    t.h.send(json!({"jsonrpc":"2.0","method":"notifications/initialized"}));
    let created =
        t.h.request(json!({"jsonrpc":"2.0","id":20,"method":"tools/call",
        "params":{"name":"slow","arguments":{"x":1},"task":{"ttl":60000}}}));
    let task_id = created["result"]["task"]["taskId"]
        .as_str()
        .unwrap()
        .to_string();
    let job = t.h.jobs.remove(0);
    // The call's span has ended with the handle; the task's is still open.
    assert!(t.spans().iter().all(|s| s.name != "task slow"));
    assert_eq!(t.telemetry.tasks().len(), 1);
    // The tool runs in the task's span: what it opens and adds goes there.
    let ids = job.context.trace.clone().expect("the task's span");
    let mut children = mcp_core::telemetry::children::Children::default();
    assert!(children.open(&t.telemetry, &ids, "step".into(), Vec::new()));
    children.close(None);
    let rows = vec![opentelemetry::KeyValue::new("rows", 7_i64)];
    t.h.engine.on_span_annotate(job.id, rows, None);
    ask_and_accept(&mut t, job.id);
    t.h.complete(job.id, done_text("2"));
    let call = t.span("tools/call slow");
    let task = t.span("task slow");
    assert_eq!(task.span_kind, SpanKind::Internal);
    assert_eq!(task.parent_span_id, call.span_context.span_id());
    assert_eq!(task.span_context.trace_id(), call.span_context.trace_id());
    assert_eq!(text(&task, "mcp.task.id"), task_id);
    assert_eq!(text(&task, "gen_ai.tool.name"), "slow");
    assert_eq!(text(&task, "mcp.task.status"), "completed");
    assert_eq!(attribute(&task, "rows"), Some(OtelValue::I64(7)));
    let step = t.span("step");
    assert_eq!(step.parent_span_id, task.span_context.span_id());
    assert_eq!(ids.span_id(), task.span_context.span_id().to_string());
    assert_eq!(task.status, Status::Unset);
    let events: Vec<_> = task.events.iter().map(|e| e.name.to_string()).collect();
    assert_eq!(
        events,
        [
            "task working",
            "task input_required",
            "task working",
            "task completed"
        ]
    );
    assert!(
        task.end_time >= call.end_time,
        "the task outlives its call's span"
    );
    assert!(t.telemetry.tasks().is_empty());

    // A cancelled task's span ends with error.type `cancelled`.
    let created =
        t.h.request(json!({"jsonrpc":"2.0","id":21,"method":"tools/call",
        "params":{"name":"slow","arguments":{"x":1},"task":{}}}));
    let task_id = created["result"]["task"]["taskId"]
        .as_str()
        .unwrap()
        .to_string();
    let job = t.h.jobs.remove(0);
    t.h.request(
        json!({"jsonrpc":"2.0","id":22,"method":"tasks/cancel","params":{"taskId":task_id}}),
    );
    t.h.complete(job.id, Outcome::Cancelled);
    let cancelled: Vec<_> = t
        .spans()
        .into_iter()
        .filter(|s| s.name == "task slow" && text(s, "mcp.task.id") == task_id)
        .collect();
    assert_eq!(cancelled.len(), 1);
    assert_eq!(text(&cancelled[0], "error.type"), "cancelled");
    assert!(matches!(cancelled[0].status, Status::Error { .. }));

    // One still running when the server stops ends as unfinished.
    t.h.request(json!({"jsonrpc":"2.0","id":23,"method":"tools/call",
        "params":{"name":"slow","arguments":{"x":1},"task":{}}}));
    t.telemetry.finish();
    let spans = t.kept.0.lock().unwrap().clone();
    let last = spans.iter().filter(|s| s.name == "task slow").count();
    assert_eq!(last, 3);
    assert!(spans
        .iter()
        .any(|s| s.name == "task slow" && text(s, "mcp.task.status") == "unfinished"));
}

#[test]
fn the_otlp_encoding_is_protobuf_unless_a_protocol_variable_asks_for_json() {
    use mcp_core::telemetry::export::{protocol, METRICS_PROTOCOL, PROTOCOL, TRACES_PROTOCOL};
    use opentelemetry_otlp::Protocol;
    let env = fake_env;
    assert_eq!(protocol(TRACES_PROTOCOL, env(&[])), Protocol::HttpBinary);
    assert_eq!(
        protocol(TRACES_PROTOCOL, env(&[(PROTOCOL, "http/json")])),
        Protocol::HttpJson
    );
    // The signal's own variable comes first.
    let both: &[(&str, &str)] = &[(PROTOCOL, "http/json"), (METRICS_PROTOCOL, "http/protobuf")];
    assert_eq!(protocol(METRICS_PROTOCOL, env(both)), Protocol::HttpBinary);
    assert_eq!(protocol(TRACES_PROTOCOL, env(both)), Protocol::HttpJson);
    // gRPC is not spoken: protobuf over HTTP instead.
    assert_eq!(
        protocol(TRACES_PROTOCOL, env(&[(PROTOCOL, "grpc")])),
        Protocol::HttpBinary
    );
    assert_eq!(
        protocol(TRACES_PROTOCOL, env(&[(TRACES_PROTOCOL, " HTTP/JSON ")])),
        Protocol::HttpJson
    );
}

/// Job `job` asks the client a question, which the client accepts.
fn ask_and_accept(t: &mut Traced, job: mcp_core::engine::JobId) {
    let asked = t.h.ask(
        job,
        "who",
        json!({"method":"elicitation/create","params":{"message":"Who?","requestedSchema":{"type":"object","properties":{}}}}),
    );
    let ask_id = asked
        .iter()
        .find(|m| m["method"] == "elicitation/create")
        .map(|m| m["id"].clone())
        .expect("an elicitation request");
    t.h.send(json!({"jsonrpc":"2.0","id":ask_id,"result":{"action":"accept","content":{}}}));
}

/// An environment holding only `pairs`, as the settings' readers take it.
fn fake_env(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
    move |name: &str| {
        pairs
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.to_string())
    }
}
