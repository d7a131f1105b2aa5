//! Who may talk to the server: DNS rebinding, Host and Origin, CORS, bearer
//! tokens, sessions bound to their token, bodies it will not read.

use super::*;

#[test]
fn dns_rebinding_is_refused_and_loopback_names_are_served() {
    let h = start(options());
    let init = initialize_request("2025-11-25", json!({}));
    let evil = post(
        h.address,
        &[
            ("Host", "evil.example.com"),
            ("Origin", "http://evil.example.com"),
        ],
        &init,
    );
    assert!((400..500).contains(&evil.status), "{}", evil.status);
    assert_eq!(
        post(h.address, &[("Origin", "http://evil.example.com")], &init).status,
        403
    );
    assert_eq!(
        post(h.address, &[("Host", "evil.example.com:8000")], &init).status,
        421
    );
    let port = h.address.port().to_string();
    let host = format!("localhost:{port}");
    let origin = format!("http://localhost:{port}");
    assert_eq!(
        post(h.address, &[("Host", &host), ("Origin", &origin)], &init).status,
        200
    );
}

#[test]
fn a_bearer_token_is_required_when_configured() {
    let h = start(Options {
        bearer_tokens: vec!["s3cret".into()],
        resource: Some("http://127.0.0.1/mcp".into()),
        authorization_servers: vec!["https://auth.example.com".into()],
        ..options()
    });
    let list = modern(1, "tools/list", json!({}));
    let headers = modern_headers("tools/list", None);
    let refused = post(h.address, &headers, &list);
    assert_eq!(refused.status, 401);
    let challenge = refused.header("www-authenticate").unwrap().to_string();
    assert!(challenge.starts_with("Bearer resource_metadata=\"http://127.0.0.1/.well-known/oauth-protected-resource/mcp\""), "{challenge}");
    assert!(!challenge.contains("invalid_token"));
    let mut wrong = headers.clone();
    wrong.push(("Authorization", "Bearer guess"));
    let refused = post(h.address, &wrong, &list);
    assert_eq!(refused.status, 401);
    assert!(refused
        .header("www-authenticate")
        .unwrap()
        .contains("error=\"invalid_token\""));
    let mut right = headers.clone();
    right.push(("Authorization", "Bearer s3cret"));
    assert_eq!(post(h.address, &right, &list).status, 200);
    // The metadata itself needs no token.
    let prm = send(
        h.address,
        "GET",
        "/.well-known/oauth-protected-resource/mcp",
        &[],
        "",
    );
    assert_eq!(prm.status, 200);
    let doc = prm.json();
    assert_eq!(doc["resource"], "http://127.0.0.1/mcp");
    assert_eq!(doc["authorization_servers"][0], "https://auth.example.com");
}

#[test]
fn a_non_loopback_address_needs_an_allow_list() {
    let refused = Server::start_http(
        Config::default(),
        Registry::new(tools()).unwrap(),
        Options {
            host: "0.0.0.0".into(),
            ..options()
        },
        Interrupter::new(|| {}, || {}),
    );
    assert!(refused.is_err());
    let allowed = Server::start_http(
        Config::default(),
        Registry::new(tools()).unwrap(),
        Options {
            host: "0.0.0.0".into(),
            allowed_hosts: Some(Allowed::Any),
            allowed_origins: Some(Allowed::Any),
            ..options()
        },
        Interrupter::new(|| {}, || {}),
    );
    assert!(allowed.is_ok());
}

#[test]
fn host_and_origin_are_read_as_rfc_9112_says() {
    let h = start(options());
    let list = modern(1, "tools/list", json!({})).to_string();
    let status = |target: &str, lines: &[(&str, &str)]| {
        let mut headers = modern_headers("tools/list", None);
        headers.extend_from_slice(lines);
        send(h.address, "POST", target, &headers, &list).status
    };
    let port = h.address.port().to_string();
    let local = format!("localhost:{port}");
    assert_eq!(status("/mcp", &[("Host", &local)]), 200);
    assert_eq!(status("/mcp", &[("Host", &local), ("Host", &local)]), 400);
    // An absolute-form target names the host; Host is ignored then.
    assert_eq!(status("http://evil.com/mcp", &[("Host", &local)]), 421);
    assert_eq!(
        status(&format!("http://{local}/mcp"), &[("Host", "evil.com")]),
        200
    );
    for bad in ["localhost:80@evil.com", "[::1]evil", "localhost:abc"] {
        assert_eq!(status("/mcp", &[("Host", bad)]), 400, "{bad}");
    }
    assert_eq!(
        status("/mcp", &[("Host", &local), ("Origin", "http://localhöst")]),
        403
    );
    assert_eq!(
        status(
            "/mcp",
            &[
                ("Host", &local),
                ("Origin", "http://localhost"),
                ("Origin", "http://evil.com")
            ]
        ),
        403
    );
    assert_eq!(
        status(
            "/mcp",
            &[("Host", &local), ("Origin", "http://localhost:80@evil.com")]
        ),
        403
    );
}

#[test]
fn bodies_in_codings_it_does_not_read_or_of_other_media_types_are_refused() {
    let h = start(options());
    let list = modern(1, "tools/list", json!({})).to_string();
    let routing = "MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/list";
    let chunked = format!("{:x}\r\n{list}\r\n0\r\n\r\n", list.len());
    let with = |lines: &str| {
        send_raw(
            h.address,
            &head_11(
                h.address,
                "POST",
                &[routing, "Content-Type: application/json", lines],
            ),
            chunked.as_bytes(),
        )
        .status
    };
    assert_eq!(with("Transfer-Encoding: chunked"), 200);
    assert_eq!(with("Transfer-Encoding: gzip, chunked"), 501);
    assert_eq!(
        with("Transfer-Encoding: chunked\r\nContent-Encoding: gzip"),
        415
    );
    assert_eq!(
        post(
            h.address,
            &[
                ("Content-Type", "application/jsonx"),
                ("MCP-Protocol-Version", MODERN),
                ("Mcp-Method", "tools/list")
            ],
            &modern(1, "tools/list", json!({}))
        )
        .status,
        415
    );
}

#[test]
fn allowed_hosts_alone_serve_a_public_address_with_loopback_origins() {
    let h = start(Options {
        host: "0.0.0.0".into(),
        allowed_hosts: Some(Allowed::List(vec!["mcp.example.com".into()])),
        ..options()
    });
    let address = SocketAddr::from(([127, 0, 0, 1], h.address.port()));
    let init = initialize_request("2025-11-25", json!({}));
    let named = ("Host", "mcp.example.com");
    assert_eq!(post(address, &[named], &init).status, 200);
    // Web pages: only those of the machine itself, unless origins are named.
    let evil = ("Origin", "https://evil.example.com");
    assert_eq!(post(address, &[named, evil], &init).status, 403);
    let local = ("Origin", "http://localhost:3000");
    assert_eq!(post(address, &[named, local], &init).status, 200);
    // The loopback names are not among the allowed hosts.
    assert_eq!(post(address, &[], &init).status, 421);
}

#[test]
fn a_refusal_to_an_allowed_origin_carries_cors_headers() {
    let h = start(Options {
        bearer_tokens: vec!["t".into()],
        ..options()
    });
    let refused = post(
        h.address,
        &[("Origin", "http://localhost:6274")],
        &initialize_request("2025-11-25", json!({})),
    );
    assert_eq!(refused.status, 401);
    assert!(refused.header("www-authenticate").is_some());
    assert_eq!(
        refused.header("access-control-allow-origin"),
        Some("http://localhost:6274")
    );
    let exposed = refused.header("access-control-expose-headers").unwrap();
    assert!(exposed.contains("WWW-Authenticate") && exposed.contains("Mcp-Session-Id"));
    // A 404 of the endpoint's neighbours too; never for a refused origin.
    let elsewhere = send(
        h.address,
        "GET",
        "/other",
        &[("Origin", "http://localhost:6274")],
        "",
    );
    assert_eq!(elsewhere.status, 404);
    assert!(elsewhere.header("access-control-allow-origin").is_some());
    let evil = post(
        h.address,
        &[("Origin", "http://evil.example.com")],
        &initialize_request("2025-11-25", json!({})),
    );
    assert_eq!(evil.status, 403);
    assert!(evil.header("access-control-allow-origin").is_none());
}

#[test]
fn a_session_serves_only_the_token_that_opened_it() {
    let h = start(Options {
        bearer_tokens: vec!["alice".into(), "bob".into()],
        ..options()
    });
    let reply = post(
        h.address,
        &[("Authorization", "Bearer alice")],
        &initialize_request("2025-11-25", json!({})),
    );
    assert_eq!(reply.status, 200);
    let session = reply.header("mcp-session-id").unwrap().to_string();
    let list = json!({"jsonrpc":"2.0","id":1,"method":"tools/list"});
    let as_alice = post(
        h.address,
        &[
            ("Authorization", "Bearer alice"),
            ("Mcp-Session-Id", &session),
        ],
        &list,
    );
    assert_eq!(as_alice.status, 200);
    let as_bob = post(
        h.address,
        &[
            ("Authorization", "Bearer bob"),
            ("Mcp-Session-Id", &session),
        ],
        &list,
    );
    assert_eq!(
        as_bob.status, 404,
        "another principal does not find the session"
    );
    let bob_deletes = send(
        h.address,
        "DELETE",
        "/mcp",
        &[
            ("Authorization", "Bearer bob"),
            ("Mcp-Session-Id", &session),
        ],
        "",
    );
    assert_eq!(bob_deletes.status, 404);
    assert_eq!(
        post(
            h.address,
            &[
                ("Authorization", "Bearer alice"),
                ("Mcp-Session-Id", &session)
            ],
            &list
        )
        .status,
        200
    );
}

#[test]
fn a_page_of_an_allowed_origin_may_call_with_cors() {
    let h = start(Options {
        bearer_tokens: vec!["t".into()],
        ..options()
    });
    let preflight = send(
        h.address,
        "OPTIONS",
        "/mcp",
        &[
            ("Origin", "http://localhost:6274"),
            ("Access-Control-Request-Method", "POST"),
            (
                "Access-Control-Request-Headers",
                "authorization, content-type, mcp-session-id, mcp-protocol-version",
            ),
        ],
        "",
    );
    assert_eq!(preflight.status, 204, "no token is needed to ask");
    assert_eq!(
        preflight.header("access-control-allow-origin"),
        Some("http://localhost:6274")
    );
    assert!(preflight
        .header("access-control-allow-headers")
        .unwrap()
        .contains("mcp-session-id"));
    assert!(preflight
        .header("access-control-allow-methods")
        .unwrap()
        .contains("DELETE"));
    let evil = send(
        h.address,
        "OPTIONS",
        "/mcp",
        &[("Origin", "http://evil.example.com")],
        "",
    );
    assert_eq!(evil.status, 403);
    let reply = post(
        h.address,
        &[
            ("Origin", "http://localhost:6274"),
            ("Authorization", "Bearer t"),
        ],
        &initialize_request("2025-11-25", json!({})),
    );
    assert_eq!(reply.status, 200);
    assert_eq!(
        reply.header("access-control-allow-origin"),
        Some("http://localhost:6274")
    );
    assert!(reply
        .header("access-control-expose-headers")
        .unwrap()
        .contains("Mcp-Session-Id"));
}
