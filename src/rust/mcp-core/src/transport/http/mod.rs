//! Streamable HTTP: one endpoint (`/mcp` by default) serving both eras.
//!
//! - **Handshake era** (2025-03-26, 2025-06-18, 2025-11-25): `initialize`
//!   creates a session with its own engine (its own negotiated revision,
//!   log level and client capabilities) and an unguessable
//!   `Mcp-Session-Id`; later POSTs carry the id (missing: 400, unknown or
//!   ended: 404). A request is answered as `application/json`, or as a
//!   `text/event-stream` when it sends anything before its response
//!   (progress, logs, `elicitation/create`) or takes longer than a moment;
//!   the client answers the server's requests by POST (202). GET opens the
//!   session's standalone stream, for messages no request stream can take;
//!   DELETE ends the session and cancels its calls.
//! - **2026-07-28**: no session. Each request gets an engine of its own for
//!   its lifetime, after the HTTP checks of the validation ladder (see
//!   [`modern`]); error responses carry the HTTP status the revision asks
//!   for (400, or 404 for an unknown method). Closing the response stream
//!   cancels the call. `subscriptions/listen` is a long-lived stream.
//!   Tasks of the `io.modelcontextprotocol/tasks` extension outlive the
//!   request that created them: they live in a store all these engines
//!   share (bounded, expiring), so any later request of the process finds
//!   them (`tasks/get`, `tasks/update`, `tasks/cancel`, listen streams
//!   following `taskIds`); the creating request's stream ends with the
//!   task's handle, and closing it never cancels the task. With tokens
//!   configured, a task belongs to the credentials that created it (see
//!   [`security::task_owner`]): to anyone else it is an unknown id.
//! - The 2024-11-05 HTTP+SSE transport (GET `/sse` + POST `/messages`) is
//!   not served: deprecated since 2025-03-26, absent from the conformance
//!   suite and dropped by the TypeScript SDK, while every maintained client
//!   speaks Streamable HTTP; 2024-11-05 clients reach the server over stdio.
//!
//! Every engine queues its tool calls to the one R thread through the same
//! [`Server::poll`](crate::transport::server::Server::poll) interface as stdio; job ids
//! are unique server-wide. See [`streams`] for how each message finds the
//! stream it belongs on, and [`security`] for Host/Origin checks and tokens.
//!
//! Built on hyper 1 (HTTP/1.1 server only) rather than axum: the endpoint
//! routes on headers and bodies, not paths, so a routing framework would
//! add dependencies without removing code, while hyper gives the two
//! things this needs directly: streaming response bodies (SSE) that notice
//! a client going away when dropped, and limits on the request head.
//! Everything runs on one thread with a current-thread tokio runtime; no
//! request waits for R there (only for channels), so one thread keeps up
//! with many clients.

pub mod body;
pub mod connections;
pub mod limits;
pub mod modern;
mod options;
mod responses;
mod routing;
pub mod security;
mod sessions;
mod shutdown;
mod state;
pub mod streams;
pub mod tokens;

use crate::transport::slots::Front;
use crate::util::threads;
use hyper::body::Incoming;
use hyper::Request;
use security::{Allowed, Policy};
use std::collections::HashMap;
use std::convert::Infallible;
use std::io;
use std::net::{SocketAddr, TcpListener as StdListener, ToSocketAddrs};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use tokio::sync::Semaphore;

pub use options::Options;
use state::Hub;
pub use state::Stopper;

/// The running HTTP front: its thread and how to stop it.
pub struct Listener {
    address: SocketAddr,
    stop: Stopper,
    thread: Option<JoinHandle<()>>,
}

impl Listener {
    /// Binds the address (errors, such as a port in use, are returned
    /// here) and serves on a thread of its own.
    pub fn start(options: Options, front: Front) -> io::Result<Listener> {
        let address = (options.host.as_str(), options.port)
            .to_socket_addrs()?
            .next()
            .ok_or_else(|| {
                io::Error::new(io::ErrorKind::InvalidInput, "no address for the host")
            })?;
        let policy = policy_for(&options, address)?;
        let listener = StdListener::bind(address)?;
        listener.set_nonblocking(true)?;
        let address = listener.local_addr()?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let stop = Stopper::new();
        let stopped = stop.clone();
        let checker = options
            .token_check
            .clone()
            .map(|check| Arc::new(tokens::Checker::new(check, &front)));
        let hub = Arc::new(Hub {
            checker,
            front,
            streams: Arc::new(Semaphore::new(options.max_streams)),
            stream_shares: limits::Shares::new(options.max_streams_per_client),
            options,
            policy,
            sessions: Mutex::new(HashMap::new()),
            in_flight: state::InFlight::default(),
            stopping: tokio::sync::watch::Sender::new(false),
        });
        let failed = hub.front.clone();
        let thread = threads::spawn(
            "http",
            move |message| failed.fail("http", message),
            move || runtime.block_on(serve(listener, hub, stopped)),
        )?;
        Ok(Listener {
            address,
            stop,
            thread: Some(thread),
        })
    }

    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// How to stop it from another thread.
    pub fn stopper(&self) -> Stopper {
        self.stop.clone()
    }

    /// Stops gracefully (see [`shutdown`]) and waits until it has.
    pub fn stop(&mut self) {
        self.stop.stop();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Hosts must be named on a non-loopback address, where clients reach the
/// server by names of their own. Origins default to the loopback ones
/// everywhere: pages of the machine itself may call it, other web pages
/// only when named (requests without `Origin`, from no web page, pass).
fn policy_for(options: &Options, address: SocketAddr) -> io::Result<Policy> {
    let hosts = options
        .allowed_hosts
        .clone()
        .or_else(|| Policy::default_for(address.ip()));
    let origins = options.allowed_origins.clone().unwrap_or(Allowed::Loopback);
    match hosts {
        Some(hosts) => Ok(Policy {
            hosts,
            origins,
            tokens: options.bearer_tokens.clone(),
        }),
        None => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "serving on {} (not a loopback address) needs the host names clients use, \
                 or an explicit opt-out of the check",
                address.ip()
            ),
        )),
    }
}

/// The accept loop, until `stopped`; idle sessions are swept meanwhile.
/// Then the server stops gracefully (see [`shutdown`]).
async fn serve(listener: StdListener, hub: Arc<Hub>, stopped: Stopper) {
    let listener = match tokio::net::TcpListener::from_std(listener) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("mcpserver: the HTTP listener failed: {e}");
            return;
        }
    };
    let connections = connections::Connections::new(connections::cap(hub.options.max_connections));
    let mut sweep = tokio::time::interval(
        (hub.options.session_idle / 4).clamp(Duration::from_millis(50), Duration::from_secs(30)),
    );
    let stop = stopped.0.stop.notified();
    tokio::pin!(stop);
    loop {
        let accepted = tokio::select! {
            _ = &mut stop => break,
            _ = sweep.tick() => {
                hub.sweep_idle_sessions();
                continue;
            }
            accepted = listener.accept() => accepted,
        };
        let Ok((stream, peer)) = accepted else {
            // Out of descriptors, say: try again in a moment, not in a spin.
            tokio::time::sleep(Duration::from_millis(10)).await;
            continue;
        };
        let connection = loop {
            match connections.admit() {
                connections::Admission::Admitted(c) => break Some(c),
                connections::Admission::Full(room_at) => {
                    // Far off when no connection waits: then only one
                    // that starts waiting or closes makes room.
                    let room_at =
                        room_at.unwrap_or_else(|| Instant::now() + Duration::from_secs(3600));
                    tokio::select! {
                        _ = &mut stop => break None,
                        _ = connections.room() => {}
                        _ = tokio::time::sleep_until(room_at.into()) => {}
                    }
                }
            }
        };
        let Some(connection) = connection else {
            break;
        };
        tokio::spawn(serve_connection(stream, peer, connection, hub.clone()));
    }
    drop(listener);
    hub.shut_down(&connections, &stopped).await;
}

/// Serves one connection until it closes, or until the server closes it
/// (to make room, or when stopping: then after the answer it is sending).
async fn serve_connection(
    stream: tokio::net::TcpStream,
    peer: SocketAddr,
    connection: connections::Connection,
    hub: Arc<Hub>,
) {
    let _ = stream.set_nodelay(true);
    let connection = Arc::new(connection);
    let options = &hub.options;
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .max_header_size(options.max_header_bytes)
        .timer(hyper_util::rt::TokioTimer::new())
        .header_read_timeout(options.idle_timeout);
    let service = {
        let (connection, hub) = (connection.clone(), hub.clone());
        hyper::service::service_fn(move |mut request: Request<Incoming>| {
            let busy = connection.busy();
            request.extensions_mut().insert(connection.body_watch());
            let hub = hub.clone();
            async move {
                let response = tokio::select! {
                    biased;
                    response = hub.clone().handle(request, peer) => response,
                    _ = hub.stopped() => shutdown::refused_while_stopping(),
                };
                Ok::<_, Infallible>(response.map(|body| connections::Tracked::new(body, busy)))
            }
        })
    };
    let conn = builder.serve_connection(hyper_util::rt::TokioIo::new(stream), service);
    tokio::pin!(conn);
    tokio::select! {
        biased;
        _ = conn.as_mut() => return,
        _ = connection.closing() => conn.as_mut().graceful_shutdown(),
    }
    let _ = conn.await;
}
