//! Metrics by the semantic conventions for MCP: the histograms
//! `mcp.server.operation.duration` (one measurement per request, when its
//! span ends) and `mcp.server.session.duration` (one per handshake-era
//! session, when it ends), in seconds, with the conventions' explicit
//! bucket boundaries.
//!
//! The SDK aggregates them; the export thread ([`super::export`]) collects
//! the aggregate through a manual reader every export interval
//! (`OTEL_METRIC_EXPORT_INTERVAL`, 60 s by default) and when the server
//! stops, so no thread of the SDK's own is started. Temporality is
//! cumulative: each export carries the totals since the server started.

use opentelemetry::metrics::{Histogram, MeterProvider as _};
use opentelemetry::KeyValue;
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::metrics::data::ResourceMetrics;
use opentelemetry_sdk::metrics::reader::MetricReader;
use opentelemetry_sdk::metrics::{
    InstrumentKind, ManualReader, Pipeline, SdkMeterProvider, Temporality,
};
use opentelemetry_sdk::Resource;
use std::sync::{Arc, Weak};
use std::time::Duration;

/// The bucket boundaries (seconds) the conventions give both histograms.
pub const BUCKETS: [f64; 14] = [
    0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0,
];
pub const OPERATION_DURATION: &str = "mcp.server.operation.duration";
pub const SESSION_DURATION: &str = "mcp.server.session.duration";

/// The span attributes an operation's measurement carries: the
/// low-cardinality ones (no ids, no URIs, no addresses).
pub const OPERATION_KEYS: &[&str] = &[
    "mcp.method.name",
    "gen_ai.tool.name",
    "gen_ai.operation.name",
    "gen_ai.prompt.name",
    "mcp.protocol.version",
    "network.transport",
    "network.protocol.name",
];

/// The two histograms and the reader their aggregate is collected by.
pub struct Metrics {
    provider: SdkMeterProvider,
    reader: Arc<ManualReader>,
    operation: Histogram<f64>,
    session: Histogram<f64>,
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Metrics").finish_non_exhaustive()
    }
}

/// The manual reader, shared between the provider (which registers its
/// pipeline with it) and the export thread (which collects from it).
#[derive(Debug)]
struct SharedReader(Arc<ManualReader>);

impl MetricReader for SharedReader {
    fn register_pipeline(&self, pipeline: Weak<Pipeline>) {
        self.0.register_pipeline(pipeline);
    }

    fn collect(&self, rm: &mut ResourceMetrics) -> OTelSdkResult {
        self.0.collect(rm)
    }

    fn force_flush(&self) -> OTelSdkResult {
        self.0.force_flush()
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        self.0.shutdown_with_timeout(timeout)
    }

    fn temporality(&self, kind: InstrumentKind) -> Temporality {
        self.0.temporality(kind)
    }
}

impl Metrics {
    pub fn new(resource: Resource) -> Metrics {
        let reader = Arc::new(
            ManualReader::builder()
                .with_temporality(Temporality::Cumulative)
                .build(),
        );
        let provider = SdkMeterProvider::builder()
            .with_reader(SharedReader(reader.clone()))
            .with_resource(resource)
            .build();
        let meter = provider.meter("mcpserver");
        let histogram = |name: &'static str, description: &'static str| {
            meter
                .f64_histogram(name)
                .with_unit("s")
                .with_description(description)
                .with_boundaries(BUCKETS.to_vec())
                .build()
        };
        Metrics {
            operation: histogram(
                OPERATION_DURATION,
                "The duration of an MCP request or notification as the server observes it.",
            ),
            session: histogram(
                SESSION_DURATION,
                "The duration of an MCP session as the server observes it.",
            ),
            provider,
            reader,
        }
    }

    /// One request took `seconds`.
    pub fn operation(&self, seconds: f64, attributes: &[KeyValue]) {
        self.operation.record(seconds, attributes);
    }

    /// One session lasted `seconds`.
    pub fn session(&self, seconds: f64, attributes: &[KeyValue]) {
        self.session.record(seconds, attributes);
    }

    /// The aggregate so far, or `None` when there is nothing to read.
    pub fn collect(&self) -> Option<ResourceMetrics> {
        let mut rm = ResourceMetrics::default();
        self.reader.collect(&mut rm).ok()?;
        let any = rm.scope_metrics().any(|s| s.metrics().next().is_some());
        any.then_some(rm)
    }
}

impl Drop for Metrics {
    fn drop(&mut self) {
        let _ = self.provider.shutdown();
    }
}

/// The attributes of `all` that an operation's measurement keeps.
pub fn operation_attributes(all: &[KeyValue]) -> Vec<KeyValue> {
    all.iter()
        .filter(|kv| OPERATION_KEYS.contains(&kv.key.as_str()))
        .cloned()
        .collect()
}
