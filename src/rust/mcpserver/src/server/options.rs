//! The server's settings as `mcp_server()` passes them (named lists,
//! checked on the R side), read into mcp-core's `Config` and
//! `http::Options`.

use crate::check;
use crate::rvalue::{field, flag_value, single_number, RValue};
use mcp_core::engine::{Config, ServerInfo};
use mcp_core::telemetry::{self, Settings, Telemetry};
use mcp_core::transport::http;
use std::sync::Arc;
use std::time::Duration;

/// The server settings `mcp_server()` passes as a named list (checked
/// there): `name`, `version`, `title`, `instructions`, `max_message_size`,
/// `timeout`, `queue_timeout`, `request_state_key`, `request_state_store`,
/// `telemetry`.
pub fn config_from(options: RValue) -> Config {
    let text = |name: &str| {
        field(options, name)
            .as_single_string()
            .map(|s| s.into_owned())
    };
    let number = |name: &str| single_number(field(options, name));
    let name = text("name").unwrap_or_default();
    Config {
        telemetry: telemetry_from(field(options, "telemetry"), &name),
        info: ServerInfo {
            name,
            version: text("version").unwrap_or_default(),
            title: text("title"),
        },
        instructions: text("instructions"),
        max_message_bytes: number("max_message_size")
            .map_or(Config::default().max_message_bytes, |n| n as usize),
        default_timeout: number("timeout").map(check::seconds),
        queue_timeout: number("queue_timeout").map(check::seconds),
        request_state_key: text("request_state_key").map(String::into_bytes),
        request_state_store: text("request_state_store").map(std::path::PathBuf::from),
        // Large arguments are read straight into R values (from_json.rs).
        arguments_as_text: true,
        ..Config::default()
    }
}

/// Telemetry as `mcp_server(telemetry = )` asks (checked there): `NULL`
/// leaves it to the OpenTelemetry environment variables; a list (from
/// `mcp_telemetry()`) with `enabled`, `endpoint`, `headers` (`"name=value"`
/// strings), `service_name`, `sample` and `capture` (`"arguments"`,
/// `"result"`) turns it on (or, with `enabled`
/// false, off). The service is named after the server unless
/// `OTEL_SERVICE_NAME` or R names it.
fn telemetry_from(x: RValue, server_name: &str) -> Option<Arc<Telemetry>> {
    let mut settings = Settings::default();
    if !x.is_null() {
        if !flag_value(field(x, "enabled")) {
            return None;
        }
        let text = |name: &str| field(x, name).as_single_string().map(|s| s.into_owned());
        settings.requested = true;
        settings.endpoint = text("endpoint");
        settings.service_name = text("service_name");
        settings.sample = single_number(field(x, "sample"));
        settings.headers = strings(field(x, "headers"))
            .iter()
            .filter_map(|pair| telemetry::header_pair(pair))
            .collect();
        let capture = strings(field(x, "capture"));
        settings.capture = telemetry::Capture {
            arguments: capture.iter().any(|c| c == "arguments"),
            result: capture.iter().any(|c| c == "result"),
        };
    }
    if settings.service_name.is_none() && std::env::var_os("OTEL_SERVICE_NAME").is_none() {
        settings.service_name = Some(server_name.to_string());
    }
    Telemetry::start(&settings)
}

/// The strings of a character vector (`NULL`: none).
fn strings(x: RValue) -> Vec<String> {
    (0..x.len())
        .filter_map(|i| x.string(i).map(|s| s.into_owned()))
        .collect()
}

/// An allow-list from R: `NULL` for the default, `"*"` for no check.
fn allowed(x: RValue) -> Option<http::security::Allowed> {
    if x.is_null() {
        return None;
    }
    let names = strings(x);
    if names.iter().any(|n| n == "*") {
        return Some(http::security::Allowed::Any);
    }
    Some(http::security::Allowed::List(names))
}

/// The HTTP settings `mcp_server()` passes as a named list (checked there).
pub fn http_options_from(options: RValue) -> http::Options {
    let defaults = http::Options::default();
    let number = |name: &str| single_number(field(options, name));
    let count = |name: &str, default: usize| number(name).map_or(default, |n| n as usize);
    http::Options {
        host: field(options, "host")
            .as_single_string()
            .map_or(defaults.host.clone(), |s| s.into_owned()),
        port: number("port").map_or(defaults.port, |n| n as u16),
        path: field(options, "path")
            .as_single_string()
            .map_or(defaults.path.clone(), |s| s.into_owned()),
        allowed_hosts: allowed(field(options, "allowed_hosts")),
        allowed_origins: allowed(field(options, "allowed_origins")),
        bearer_tokens: strings(field(options, "bearer_tokens")),
        token_check: number("token_handler").map(|handler| http::tokens::TokenCheck {
            handler: handler as usize,
            cache_for: number("bearer_cache").map_or(Duration::ZERO, check::seconds),
            time_limit: number("bearer_timeout").map_or(Duration::from_secs(10), check::seconds),
            per_peer: count("bearer_checks_per_peer", http::tokens::CHECKS_PER_PEER),
        }),
        resource: field(options, "resource")
            .as_single_string()
            .map(|s| s.into_owned()),
        authorization_servers: strings(field(options, "authorization_servers")),
        max_body_bytes: count("max_body_size", defaults.max_body_bytes),
        max_header_bytes: count("max_header_size", defaults.max_header_bytes),
        max_sessions: count("max_sessions", defaults.max_sessions),
        max_sessions_per_client: count("max_sessions_per_client", defaults.max_sessions_per_client),
        max_streams: count("max_streams", defaults.max_streams),
        max_streams_per_client: count("max_streams_per_client", defaults.max_streams_per_client),
        max_connections: count("max_connections", defaults.max_connections),
        idle_timeout: number("idle_timeout").map_or(defaults.idle_timeout, check::seconds),
        body_timeout: number("body_timeout").map_or(defaults.body_timeout, check::seconds),
        session_idle: number("session_timeout").map_or(defaults.session_idle, check::seconds),
        task_id_prefix: field(options, "task_id_prefix")
            .as_single_string()
            .map_or_else(String::new, |s| s.into_owned()),
        ..defaults
    }
}
