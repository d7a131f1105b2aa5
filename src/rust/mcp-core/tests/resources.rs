//! Resources, resource templates, prompts and completion on every revision,
//! with every message the engine writes checked against the official wire
//! schema of the revision in use. Fixtures follow the conformance suite's.

mod common;

use common::check_message;
use common::harness::Harness;
use mcp_core::engine::registry::Registry;
use mcp_core::engine::result::JsonText;
use mcp_core::engine::result::{Block, Content, ResourceBody, ToolResult};
use mcp_core::engine::{Config, Job, Outcome};
use mcp_core::protocol::revision::Revision;
use mcp_core::protocol::tool::ToolDef;
use serde_json::{json, Value};
use std::time::Duration;

const LEGACY: [&str; 4] = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];
const MODERN: &str = "2026-07-28";
const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

fn def(name: &str) -> ToolDef {
    ToolDef {
        name: name.into(),
        description: Some(format!("{name} handler")),
        input_schema: json!({"type": "object"}),
        ..ToolDef::default()
    }
}

/// One tool, then the handlers: 1 static-text, 2 static-binary,
/// 3 template, 4 watched, 5..8 prompts, 9 the completer of arg1.
fn registry() -> Registry {
    let mut defs = vec![def("echo")];
    for name in [
        "r-text",
        "r-binary",
        "r-template",
        "r-watched",
        "p-simple",
        "p-args",
        "p-embedded",
        "p-image",
        "c-arg1",
    ] {
        defs.push(def(name));
    }
    let catalog = json!({
        "handlersFrom": 1,
        "resources": [
            {"uri": "test://static-text", "name": "static-text", "title": "Static Text Resource",
             "description": "A static text resource", "mimeType": "text/plain", "handler": 1,
             "icons": [{"src": "https://example.com/i.png", "mimeType": "image/png"}],
             "_meta": {"origin": "test"},
             "annotations": {"audience": ["user"], "priority": 0.5, "lastModified": "2025-01-01T00:00:00Z"}},
            {"uri": "test://static-binary", "name": "static-binary", "mimeType": "image/png", "size": 70, "handler": 2},
            {"uri": "test://watched-resource", "name": "watched-resource", "mimeType": "text/plain", "handler": 4}
        ],
        "templates": [
            {"uriTemplate": "test://template/{id}/data", "name": "template", "title": "Template",
             "description": "Data by id", "mimeType": "application/json", "handler": 3,
             "icons": [{"src": "https://example.com/t.png"}], "_meta": {"k": 1}}
        ],
        "prompts": [
            {"name": "test_simple_prompt", "description": "A simple prompt", "title": "Simple", "handler": 5},
            {"name": "test_prompt_with_arguments", "description": "A prompt with arguments", "handler": 6,
             "arguments": [{"name": "arg1", "description": "First", "title": "Arg 1", "required": true},
                           {"name": "arg2", "description": "Second", "required": true},
                           {"name": "style", "required": false}],
             "completions": {"arg1": 9}},
            {"name": "test_prompt_with_embedded_resource", "description": "Embeds a resource", "handler": 7,
             "arguments": [{"name": "resourceUri", "required": true}]},
            {"name": "test_prompt_with_image", "description": "An image prompt", "handler": 8}
        ]
    });
    Registry::with_catalog(defs, &catalog.to_string()).unwrap()
}

fn harness(registry: Registry) -> Harness {
    Harness::new(Config::default(), registry)
}

/// What these tests do besides sending and collecting.
trait Steps {
    fn run(&mut self, msg: Value) -> Job;
    fn finish(&mut self, job: u64, outcome: Outcome) -> Value;
    fn updated(&mut self, uri: &str) -> Vec<Value>;
    fn initialize(&mut self, version: &str) -> Value;
}

impl Steps for Harness {
    /// Sends a request that runs a handler; returns the job.
    fn run(&mut self, msg: Value) -> Job {
        let got = self.send(msg.clone());
        assert!(got.is_empty(), "{msg} answered before running: {got:?}");
        self.jobs.pop().expect("a job")
    }

    fn finish(&mut self, job: u64, outcome: Outcome) -> Value {
        let mut got = self.complete(job, outcome);
        assert_eq!(got.len(), 1, "{got:?}");
        got.remove(0)
    }

    fn updated(&mut self, uri: &str) -> Vec<Value> {
        let mut out = Vec::new();
        self.engine.on_resource_updated(uri, &mut out);
        self.collect(out)
    }

    fn initialize(&mut self, version: &str) -> Value {
        let r = self.request(
            json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
            "protocolVersion": version, "capabilities": {},
            "clientInfo": {"name":"c","version":"1"}}}),
        );
        self.rev = Revision::parse(version).unwrap();
        check_message(self.rev, &r, Some("InitializeResult"));
        r
    }
}

/// A harness on `version`, initialised unless it is 2026-07-28.
fn on(version: &str) -> Harness {
    let mut h = harness(registry());
    if version == MODERN {
        h.rev = Revision::V2026_07_28;
    } else {
        h.initialize(version);
    }
    h
}

fn every_revision() -> impl Iterator<Item = &'static str> {
    LEGACY.into_iter().chain([MODERN])
}

fn text(text: &str) -> Outcome {
    Outcome::Done(ToolResult {
        content: vec![Block::text(text)],
        structured: None,
        is_error: false,
        meta: None,
        vouched: Default::default(),
    })
}

fn blocks(content: Vec<Content>, structured: Option<Value>) -> Outcome {
    Outcome::Done(ToolResult {
        content: content
            .into_iter()
            .map(|content| Block {
                content,
                annotations: None,
                meta: None,
            })
            .collect(),
        structured: structured.map(|s| JsonText::parse(s.to_string()).unwrap()),
        is_error: false,
        meta: None,
        vouched: Default::default(),
    })
}

fn image() -> Content {
    Content::Image {
        data: PNG.into(),
        mime_type: "image/png".into(),
    }
}

#[test]
fn capabilities_are_declared_for_what_is_served() {
    for version in LEGACY {
        let caps = on(version).initialize(version)["result"]["capabilities"].clone();
        assert_eq!(
            caps["resources"],
            json!({"subscribe": true, "listChanged": true})
        );
        assert_eq!(caps["prompts"], json!({"listChanged": true}));
        assert_eq!(
            caps.get("completions").is_some(),
            version != "2024-11-05",
            "{version}"
        );
    }
    let mut h = on(MODERN);
    let r = h.request(h.msg(1, "server/discover", json!({})));
    check_message(Revision::V2026_07_28, &r, Some("DiscoverResult"));
    let caps = &r["result"]["capabilities"];
    assert!(caps["resources"].is_object() && caps["prompts"].is_object());
    assert_eq!(caps["completions"], json!({}));
}

#[test]
fn a_server_of_tools_alone_refuses_the_catalog_methods() {
    let mut h = harness(Registry::new(vec![def("echo")]).unwrap());
    let r = h.initialize("2025-11-25");
    let caps = &r["result"]["capabilities"];
    assert!(caps.get("resources").is_none() && caps.get("prompts").is_none());
    assert!(caps.get("completions").is_none());
    for method in [
        "resources/list",
        "resources/read",
        "resources/templates/list",
        "resources/subscribe",
        "prompts/list",
        "prompts/get",
        "completion/complete",
    ] {
        let r = h.request(h.msg(1, method, json!({"uri": "test://x", "name": "x"})));
        assert_eq!(r["error"]["code"], -32601, "{method}");
    }
}

#[test]
fn lists_are_valid_on_every_revision() {
    for version in every_revision() {
        let mut h = on(version);
        let rev = h.rev;
        for (method, kind, key, n) in [
            ("resources/list", "ListResourcesResult", "resources", 3),
            (
                "resources/templates/list",
                "ListResourceTemplatesResult",
                "resourceTemplates",
                1,
            ),
            ("prompts/list", "ListPromptsResult", "prompts", 4),
        ] {
            let r = h.request(h.msg(1, method, json!({})));
            check_message(rev, &r, Some(kind));
            let result = &r["result"];
            assert_eq!(
                result[key].as_array().unwrap().len(),
                n,
                "{version} {method}"
            );
            assert!(result.get("nextCursor").is_none());
            assert_eq!(
                result.get("ttlMs").is_some(),
                rev.is_modern(),
                "{version} {method}"
            );
            if rev.is_modern() {
                assert_eq!(result["cacheScope"], "public");
                assert_eq!(result["resultType"], "complete");
            }
            let r = h.request(h.msg(2, method, json!({"cursor": "abc"})));
            assert_eq!(
                r["error"]["code"], -32602,
                "{version} {method}: a foreign cursor"
            );
        }
        let r = h.request(h.msg(3, "resources/list", json!({})));
        let first = &r["result"]["resources"][0];
        assert_eq!(first["uri"], "test://static-text");
        assert_eq!(
            first.get("title").is_some(),
            rev >= Revision::V2025_06_18,
            "{version}"
        );
        assert_eq!(
            first.get("icons").is_some(),
            rev >= Revision::V2025_11_25,
            "{version}"
        );
        let r = h.request(h.msg(4, "prompts/list", json!({})));
        let args = &r["result"]["prompts"][1]["arguments"];
        assert_eq!(
            args[0],
            json!({"name": "arg1", "description": "First", "required": true,
                                   "title": "Arg 1"})
            .as_object()
            .map(|o| {
                let mut o = o.clone();
                if rev < Revision::V2025_06_18 {
                    o.remove("title");
                }
                Value::Object(o)
            })
            .unwrap()
        );
    }
}

#[test]
fn handlers_are_neither_listed_nor_callable_as_tools() {
    let mut h = on("2025-11-25");
    let r = h.request(h.msg(1, "tools/list", json!({})));
    let names: Vec<&str> = r["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["echo"]);
    let r = h.request(h.msg(2, "tools/call", json!({"name": "r-text", "arguments": {}})));
    assert_eq!(r["error"]["code"], -32602);
}

#[test]
fn reading_static_resources_on_every_revision() {
    for version in every_revision() {
        let mut h = on(version);
        let rev = h.rev;
        let job = h.run(h.msg(7, "resources/read", json!({"uri": "test://static-text"})));
        assert_eq!(job.tool, 1);
        assert_eq!(
            job.arguments,
            *json!({".uri": "test://static-text"}).as_object().unwrap()
        );
        let r = h.finish(
            job.id,
            text("This is the content of the static text resource."),
        );
        check_message(rev, &r, Some("ReadResourceResult"));
        assert_eq!(
            r["result"]["contents"],
            json!([{"uri": "test://static-text", "mimeType": "text/plain",
                    "text": "This is the content of the static text resource."}])
        );
        if rev.is_modern() {
            assert_eq!(r["result"]["ttlMs"], 0);
            assert_eq!(r["result"]["cacheScope"], "private");
            assert_eq!(r["result"]["resultType"], "complete");
        }
        let job = h.run(h.msg(8, "resources/read", json!({"uri": "test://static-binary"})));
        assert_eq!(job.tool, 2);
        let r = h.finish(job.id, blocks(vec![image()], None));
        check_message(rev, &r, Some("ReadResourceResult"));
        assert_eq!(
            r["result"]["contents"],
            json!([{"uri": "test://static-binary", "mimeType": "image/png", "blob": PNG}])
        );
    }
}

#[test]
fn a_read_may_return_several_contents_with_their_own_uris() {
    let mut h = on("2025-06-18");
    let job = h.run(h.msg(1, "resources/read", json!({"uri": "test://static-text"})));
    let files = vec![
        Content::Resource {
            uri: "test://dir/a.txt".into(),
            mime_type: Some("text/plain".into()),
            body: ResourceBody::Text("a".into()),
        },
        Content::Resource {
            uri: "test://dir/b.bin".into(),
            mime_type: None,
            body: ResourceBody::Blob("AAE=".into()),
        },
    ];
    let r = h.finish(job.id, blocks(files, None));
    check_message(h.rev, &r, Some("ReadResourceResult"));
    assert_eq!(
        r["result"]["contents"][1],
        json!({"uri": "test://dir/b.bin", "blob": "AAE="})
    );
}

#[test]
fn templates_hand_their_variables_to_the_handler() {
    for version in every_revision() {
        let mut h = on(version);
        let job = h.run(h.msg(
            1,
            "resources/read",
            json!({"uri": "test://template/123/data"}),
        ));
        assert_eq!(job.tool, 3);
        assert_eq!(
            job.arguments,
            *json!({".uri": "test://template/123/data", "id": "123"})
                .as_object()
                .unwrap()
        );
        let body = r#"{"id":"123","templateTest":true,"data":"Data for ID: 123"}"#;
        let r = h.finish(job.id, text(body));
        check_message(h.rev, &r, Some("ReadResourceResult"));
        assert_eq!(
            r["result"]["contents"],
            json!([{"uri": "test://template/123/data", "mimeType": "application/json", "text": body}])
        );
    }
}

#[test]
fn unknown_uris_are_not_found_per_revision() {
    let uri = "test://nonexistent-resource-for-conformance-testing";
    for version in every_revision() {
        let mut h = on(version);
        let r = h.request(h.msg(1, "resources/read", json!({"uri": uri})));
        check_message(h.rev, &r, None);
        let code = if version == MODERN { -32602 } else { -32002 };
        assert_eq!(r["error"]["code"], code, "{version}");
        assert_eq!(r["error"]["data"]["uri"], uri);
        assert!(h.jobs.is_empty());
        // A URI of the template's shape but another path is no match either.
        let r = h.request(h.msg(
            2,
            "resources/read",
            json!({"uri": "test://template/1/2/data"}),
        ));
        assert_eq!(r["error"]["code"], code, "{version}");
    }
}

#[test]
fn bad_reads_are_refused_before_anything_runs() {
    let mut h = on("2025-11-25");
    for params in [
        json!({}),
        json!({"uri": 5}),
        json!({"uri": "test://template/..%2Fx/data"}),
    ] {
        let r = h.request(h.msg(1, "resources/read", params.clone()));
        check_message(h.rev, &r, None);
        assert_eq!(r["error"]["code"], -32602, "{params}");
    }
    let r = h.request(h.msg(
        1,
        "resources/read",
        json!({"uri": "test://template/%2E%2E/data"}),
    ));
    assert_eq!(r["error"]["data"]["variable"], "id");
    assert!(h.jobs.is_empty());
}

#[test]
fn a_failing_handler_is_an_internal_error_naming_the_uri() {
    for version in every_revision() {
        let mut h = on(version);
        let job = h.run(h.msg(1, "resources/read", json!({"uri": "test://static-text"})));
        let r = h.finish(job.id, Outcome::Done(ToolResult::error("disk on fire")));
        check_message(h.rev, &r, None);
        assert_eq!(r["error"]["code"], -32603);
        assert!(r["error"]["message"]
            .as_str()
            .unwrap()
            .contains("disk on fire"));
        assert_eq!(r["error"]["data"]["uri"], "test://static-text");
        let job = h.run(h.msg(2, "resources/read", json!({"uri": "test://static-text"})));
        let r = h.finish(job.id, Outcome::TimedOut(Duration::from_secs(2)));
        assert_eq!(r["error"]["code"], -32603);
        assert!(r["error"]["message"]
            .as_str()
            .unwrap()
            .contains("timed out after 2 seconds"));
        // No content at all would read as "not found" on 2026-07-28.
        let job = h.run(h.msg(3, "resources/read", json!({"uri": "test://static-text"})));
        let r = h.finish(job.id, blocks(vec![], None));
        assert_eq!(r["error"]["code"], -32603, "{version}");
    }
}

#[test]
fn a_cancelled_read_is_not_answered() {
    let mut h = on("2025-11-25");
    let job = h.run(h.msg(5, "resources/read", json!({"uri": "test://static-text"})));
    let got = h
        .send(json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5}}));
    assert!(got.is_empty());
    assert_eq!(h.cancels, [job.id]);
    let mut out = Vec::new();
    h.engine.on_completed(job.id, Outcome::Cancelled, &mut out);
    assert!(h.collect(out).is_empty());
}

#[test]
fn prompts_render_messages_with_roles_on_every_revision() {
    for version in every_revision() {
        let mut h = on(version);
        let rev = h.rev;
        let job = h.run(h.msg(1, "prompts/get", json!({"name": "test_simple_prompt"})));
        assert_eq!(job.tool, 5);
        let r = h.finish(job.id, text("This is a simple prompt for testing."));
        check_message(rev, &r, Some("GetPromptResult"));
        assert_eq!(
            r["result"]["messages"],
            json!([{"role": "user", "content": {"type": "text", "text": "This is a simple prompt for testing."}}])
        );
        assert_eq!(r["result"]["description"], "A simple prompt");

        let params = json!({"name": "test_prompt_with_arguments",
                            "arguments": {"arg1": "testValue1", "arg2": "testValue2", "extra": "x"}});
        let job = h.run(h.msg(2, "prompts/get", params));
        assert_eq!(
            job.arguments,
            *json!({"arg1": "testValue1", "arg2": "testValue2"})
                .as_object()
                .unwrap(),
            "undeclared arguments are left out"
        );
        let content = vec![
            Content::Resource {
                uri: "test://example-resource".into(),
                mime_type: Some("text/plain".into()),
                body: ResourceBody::Text("Embedded resource content for testing.".into()),
            },
            image(),
            Content::Text {
                text: "Done?".into(),
            },
        ];
        let extras = json!({"roles": ["user", "user", "assistant"], "description": "Custom"});
        let r = h.finish(job.id, blocks(content, Some(extras)));
        check_message(rev, &r, Some("GetPromptResult"));
        let messages = r["result"]["messages"].as_array().unwrap();
        assert_eq!(messages[0]["content"]["type"], "resource");
        assert_eq!(messages[1]["content"]["type"], "image");
        assert_eq!(messages[2]["role"], "assistant");
        assert_eq!(r["result"]["description"], "Custom");
        assert_eq!(r["result"].get("resultType").is_some(), rev.is_modern());
        assert!(r["result"].get("ttlMs").is_none(), "prompts are not cached");
    }
}

#[test]
fn prompt_arguments_are_checked_before_the_prompt_runs() {
    for version in every_revision() {
        let mut h = on(version);
        for (params, needle) in [
            (json!({"name": "nope"}), "Unknown prompt"),
            (json!({}), "`name`"),
            (
                json!({"name": "test_prompt_with_arguments", "arguments": {"arg1": "a"}}),
                "`arg2`",
            ),
            (
                json!({"name": "test_prompt_with_arguments", "arguments": {"arg1": 1, "arg2": "b"}}),
                "strings",
            ),
            (
                json!({"name": "test_prompt_with_arguments", "arguments": ["a"]}),
                "object",
            ),
        ] {
            let r = h.request(h.msg(1, "prompts/get", params.clone()));
            check_message(h.rev, &r, None);
            assert_eq!(r["error"]["code"], -32602, "{version} {params}");
            let message = r["error"]["message"].as_str().unwrap();
            assert!(message.contains(needle), "{message} lacks {needle}");
        }
        assert!(h.jobs.is_empty());
    }
}

#[test]
fn prompt_content_a_revision_lacks_is_refused() {
    let mut h = on("2024-11-05");
    let job = h.run(h.msg(1, "prompts/get", json!({"name": "test_prompt_with_image"})));
    let audio = Content::Audio {
        data: "AAAA".into(),
        mime_type: "audio/wav".into(),
    };
    let r = h.finish(job.id, blocks(vec![audio], None));
    check_message(h.rev, &r, None);
    assert_eq!(r["error"]["code"], -32603);
    assert!(r["error"]["message"].as_str().unwrap().contains("audio"));
    let job = h.run(h.msg(2, "prompts/get", json!({"name": "test_prompt_with_image"})));
    let r = h.finish(
        job.id,
        blocks(vec![image()], Some(json!({"roles": ["system"]}))),
    );
    assert_eq!(r["error"]["code"], -32603, "no system role in MCP");
}

#[test]
fn completion_runs_the_argument_completer_or_answers_empty() {
    for version in every_revision() {
        let mut h = on(version);
        let rev = h.rev;
        let params = json!({"ref": {"type": "ref/prompt", "name": "test_prompt_with_arguments"},
                            "argument": {"name": "arg1", "value": "te"},
                            "context": {"arguments": {"arg2": "x", "bad": 1}}});
        let job = h.run(h.msg(1, "completion/complete", params));
        assert_eq!(job.tool, 9);
        assert_eq!(
            job.arguments,
            *json!({"value": "te", "context": {"arg2": "x"}})
                .as_object()
                .unwrap()
        );
        let many: Vec<String> = (0..150).map(|i| format!("test{i}")).collect();
        let r = h.finish(job.id, blocks(vec![], Some(json!({"values": many}))));
        check_message(rev, &r, Some("CompleteResult"));
        let completion = &r["result"]["completion"];
        assert_eq!(completion["values"].as_array().unwrap().len(), 100);
        assert_eq!(completion["total"], 150);
        assert_eq!(completion["hasMore"], true);

        // No completer: an empty list at once, nothing runs.
        for reference in [
            json!({"type": "ref/prompt", "name": "test_prompt_with_arguments"}),
            json!({"type": "ref/resource", "uri": "test://template/{id}/data"}),
        ] {
            let name = if reference["type"] == "ref/prompt" {
                "arg2"
            } else {
                "id"
            };
            let r = h.request(h.msg(
                2,
                "completion/complete",
                json!({"ref": reference,
                "argument": {"name": name, "value": ""}}),
            ));
            check_message(rev, &r, Some("CompleteResult"));
            assert_eq!(
                r["result"]["completion"],
                json!({"values": [], "total": 0, "hasMore": false})
            );
        }
        for params in [
            json!({"ref": {"type": "ref/prompt", "name": "nope"}, "argument": {"name": "a", "value": ""}}),
            json!({"ref": {"type": "ref/prompt", "name": "test_simple_prompt"}, "argument": {"name": "a", "value": ""}}),
            json!({"ref": {"type": "ref/resource", "uri": "test://x/{y}"}, "argument": {"name": "y", "value": ""}}),
            json!({"ref": {"type": "ref/resource", "uri": "test://template/{id}/data"}, "argument": {"name": "x", "value": ""}}),
            json!({"ref": {"type": "ref/other"}, "argument": {"name": "a", "value": ""}}),
            json!({"ref": {"type": "ref/prompt", "name": "test_simple_prompt"}}),
        ] {
            let r = h.request(h.msg(3, "completion/complete", params.clone()));
            check_message(rev, &r, None);
            assert_eq!(r["error"]["code"], -32602, "{params}");
        }
        assert!(h.jobs.is_empty());
    }
}

#[test]
fn subscribed_sessions_learn_of_updates() {
    for version in LEGACY {
        let mut h = on(version);
        let rev = h.rev;
        let r = h.request(h.msg(
            1,
            "resources/subscribe",
            json!({"uri": "test://watched-resource"}),
        ));
        check_message(rev, &r, Some("EmptyResult"));
        assert_eq!(r["result"], json!({}));
        // Template URIs can be followed too; unknown ones are not found.
        let r = h.request(h.msg(
            2,
            "resources/subscribe",
            json!({"uri": "test://template/9/data"}),
        ));
        assert_eq!(r["result"], json!({}));
        let r = h.request(h.msg(3, "resources/subscribe", json!({"uri": "test://nowhere"})));
        assert_eq!(r["error"]["code"], -32002);

        let got = h.updated("test://watched-resource");
        assert_eq!(got.len(), 1);
        check_message(rev, &got[0], Some("ResourceUpdatedNotification"));
        assert_eq!(got[0]["params"], json!({"uri": "test://watched-resource"}));
        assert!(h.updated("test://static-text").is_empty(), "not subscribed");

        let r = h.request(h.msg(
            4,
            "resources/unsubscribe",
            json!({"uri": "test://watched-resource"}),
        ));
        assert_eq!(r["result"], json!({}));
        assert!(h.updated("test://watched-resource").is_empty());
        assert_eq!(h.updated("test://template/9/data").len(), 1);
        // A new session starts with none.
        h.initialize(version);
        assert!(h.updated("test://template/9/data").is_empty());
    }
}

#[test]
fn listen_streams_get_updates_for_the_uris_they_asked_for() {
    let mut h = on(MODERN);
    let rev = h.rev;
    let r = h.request(h.msg(
        1,
        "resources/subscribe",
        json!({"uri": "test://watched-resource"}),
    ));
    assert_eq!(r["error"]["code"], -32601, "removed in 2026-07-28");
    let params = json!({"notifications": {"resourceSubscriptions": ["test://watched-resource"],
                                          "toolsListChanged": true}});
    let ack = h.request(h.msg(7, "subscriptions/listen", params));
    check_message(rev, &ack, Some("SubscriptionsAcknowledgedNotification"));
    assert_eq!(
        ack["params"]["notifications"],
        json!({"resourceSubscriptions": ["test://watched-resource"], "toolsListChanged": true})
    );
    let got = h.updated("test://watched-resource");
    assert_eq!(got.len(), 1);
    check_message(rev, &got[0], Some("ResourceUpdatedNotification"));
    assert_eq!(
        got[0]["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        7
    );
    assert!(h.updated("test://static-text").is_empty(), "not asked for");
    // Cancelling the stream ends its subscriptions.
    h.send(json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}));
    assert!(h.updated("test://watched-resource").is_empty());
}

#[test]
fn a_listen_without_resources_served_honours_no_uris() {
    let mut h = harness(Registry::new(vec![def("echo")]).unwrap());
    h.rev = Revision::V2026_07_28;
    let params = json!({"notifications": {"resourceSubscriptions": ["test://x"]}});
    let ack = h.request(h.msg(1, "subscriptions/listen", params));
    assert_eq!(ack["params"]["notifications"], json!({}));
    assert!(h.updated("test://x").is_empty());
}
