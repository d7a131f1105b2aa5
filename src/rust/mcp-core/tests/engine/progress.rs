//! Progress and logs: thinning, ordering, tokens, levels per era.

use super::*;

#[test]
fn progress_is_sent_increasing_and_thinned() {
    let mut h = harness();
    h.initialize("2025-11-25");
    let job = call_with_token(&mut h, 1, json!("tok"));
    let t0 = Instant::now();
    let sent = h.progress(job.id, 1.0, Some("one"), t0);
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0]["method"], "notifications/progress");
    assert_eq!(
        sent[0]["params"],
        json!({"progressToken":"tok","progress":1.0,"total":10.0,"message":"one"})
    );
    check_message(h.rev, &sent[0], Some("ProgressNotification"));
    // Within the interval: held back, the latest value winning.
    let soon = t0 + Duration::from_millis(10);
    assert!(h.progress(job.id, 2.0, None, soon).is_empty());
    assert_eq!(h.due.len(), 1);
    assert!(h.due[0].1 <= PROGRESS_INTERVAL);
    assert!(h.progress(job.id, 3.0, Some("three"), soon).is_empty());
    assert_eq!(h.due.len(), 1, "one wake-up for a burst");
    // Values that do not increase are dropped.
    assert!(h.progress(job.id, 2.5, None, soon).is_empty());
    let mut out = Vec::new();
    h.engine
        .on_progress_due(job.id, t0 + PROGRESS_INTERVAL, &mut out);
    let sent = h.collect(out);
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0]["params"]["progress"], 3.0);
    assert_eq!(sent[0]["params"]["message"], "three");
    // Later reports go out at once again.
    let later = t0 + PROGRESS_INTERVAL * 3;
    assert_eq!(h.progress(job.id, 4.0, None, later).len(), 1);
    assert!(h
        .progress(job.id, 4.0, None, later + PROGRESS_INTERVAL * 2)
        .is_empty());
}

#[test]
fn a_late_wake_up_never_sends_an_older_value() {
    let mut h = harness();
    h.initialize("2025-11-25");
    let job = call_with_token(&mut h, 1, json!("tok"));
    let t0 = Instant::now();
    h.progress(job.id, 1.0, None, t0);
    assert!(h
        .progress(job.id, 2.0, None, t0 + Duration::from_millis(10))
        .is_empty());
    // The wake-up for 2 is late (a busy machine); 3 arrives after the interval.
    let sent = h.progress(job.id, 3.0, None, t0 + PROGRESS_INTERVAL * 2);
    assert_eq!(sent[0]["params"]["progress"], 3.0);
    let mut out = Vec::new();
    h.engine
        .on_progress_due(job.id, t0 + PROGRESS_INTERVAL * 2, &mut out);
    assert!(h.collect(out).is_empty(), "2 must not follow 3");
}

#[test]
fn held_progress_goes_out_before_the_result() {
    let mut h = harness();
    h.initialize("2025-11-25");
    let job = call_with_token(&mut h, 1, json!(12345678901234567890u128));
    let t0 = Instant::now();
    h.progress(job.id, 1.0, None, t0);
    h.progress(job.id, 2.0, None, t0);
    let r = h.complete(job.id, Outcome::Done(text_result("done")));
    assert_eq!(r.len(), 2);
    assert_eq!(r[0]["params"]["progress"], 2.0);
    assert_eq!(r[1]["id"], 1);
    let mut out = Vec::new();
    h.engine
        .on_progress_due(job.id, t0 + PROGRESS_INTERVAL, &mut out);
    assert!(out.is_empty(), "nothing after the result");
}

#[test]
fn progress_needs_a_token_and_respects_the_revision() {
    let mut h = harness();
    h.initialize("2024-11-05");
    h.send(json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"x":1,"y":1}}}));
    let job = h.jobs.pop().unwrap();
    assert!(h
        .progress(job.id, 1.0, Some("m"), Instant::now())
        .is_empty());
    let job = call_with_token(&mut h, 2, json!(7));
    let sent = h.progress(
        job.id,
        1.0,
        Some("no messages in 2024-11-05"),
        Instant::now(),
    );
    assert_eq!(
        sent[0]["params"],
        json!({"progressToken":7,"progress":1.0,"total":10.0})
    );
    check_message(
        Revision::V2024_11_05,
        &sent[0],
        Some("ProgressNotification"),
    );
    // Nothing for a cancelled request.
    h.send_line(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}"#);
    assert!(h
        .progress(job.id, 5.0, None, Instant::now() + Duration::from_secs(1))
        .is_empty());
}

#[test]
fn legacy_logs_follow_set_level() {
    let mut h = harness();
    h.initialize("2025-11-25");
    h.send(json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"x":1,"y":1}}}));
    let job = h.jobs.pop().unwrap();
    assert!(h
        .log(job.id, LogLevel::Emergency, "nobody asked")
        .is_empty());
    let r = h.request(
        json!({"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"warning"}}),
    );
    assert_eq!(r["result"], json!({}));
    check_message(h.rev, &r, Some("EmptyResult"));
    assert!(h.log(job.id, LogLevel::Info, "too quiet").is_empty());
    let sent = h.log(job.id, LogLevel::Error, "loud enough");
    assert_eq!(
        sent[0]["params"],
        json!({"level":"error","logger":"add","data":"loud enough"})
    );
    check_message(h.rev, &sent[0], Some("LoggingMessageNotification"));
    let r = h.request(
        json!({"jsonrpc":"2.0","id":3,"method":"logging/setLevel","params":{"level":"chatty"}}),
    );
    assert_eq!(r["error"]["code"], -32602);
}

#[test]
fn modern_logs_only_for_requests_that_ask() {
    let mut h = harness();
    h.send(modern(
        1,
        "tools/call",
        json!({"name":"add","arguments":{"x":1,"y":1}}),
    ));
    let quiet = h.jobs.pop().unwrap();
    assert!(h.log(quiet.id, LogLevel::Emergency, "never").is_empty());
    let mut asking = modern(
        2,
        "tools/call",
        json!({"name":"add","arguments":{"x":1,"y":1}}),
    );
    asking["params"]["_meta"]["io.modelcontextprotocol/logLevel"] = json!("info");
    h.send(asking);
    let job = h.jobs.pop().unwrap();
    assert_eq!(job.context.log_level, Some(LogLevel::Info));
    assert!(h.log(job.id, LogLevel::Debug, "below").is_empty());
    let sent = h.log(job.id, LogLevel::Info, "hello");
    assert_eq!(sent[0]["params"]["data"], "hello");
    check_message(
        Revision::V2026_07_28,
        &sent[0],
        Some("LoggingMessageNotification"),
    );
}
