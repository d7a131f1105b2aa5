//! Large messages: pings ahead of large calls, floods of invalid items.

use super::*;

#[test]
fn a_ping_behind_a_large_call_is_answered_before_its_arguments_are_read() {
    let (mut server, mut client, _) = start(Config::default());
    init(&mut client);
    client.send_raw(flood(1, 300_000).as_bytes());
    client.send(json!({"jsonrpc":"2.0","id":2,"method":"ping"}));
    // Nothing has asked for tool calls yet, and only that reads and checks
    // a call's arguments: so the ping's answer comes first, whatever the
    // size of the call before it.
    assert_eq!(client.recv()["id"], 2);
    assert!(matches!(
        server.poll(
            Duration::from_millis(100),
            Duration::from_millis(10),
            || false
        ),
        Polled::Idle
    ));
    let answer = client.recv();
    assert_eq!(answer["id"], 1);
    assert_eq!(answer["result"]["isError"], true);
    client.close();
    assert!(matches!(
        server.poll(Duration::from_secs(5), Duration::from_millis(10), || false),
        Polled::Finished
    ));
    server.stop();
}

#[test]
fn a_flood_of_invalid_items_lists_the_first_ten_problems() {
    let (mut server, mut client, _) = start(Config::default());
    init(&mut client);
    client.send_raw(flood(1, 300_000).as_bytes());
    // Once the ping behind it is answered, the call has been read.
    client.send(json!({"jsonrpc":"2.0","id":"sync","method":"ping"}));
    let mut answers = vec![client.recv()];
    assert!(matches!(
        server.poll(
            Duration::from_millis(100),
            Duration::from_millis(10),
            || false
        ),
        Polled::Idle
    ));
    answers.push(client.recv());
    let answer = answers.into_iter().find(|a| a["id"] == 1).unwrap();
    assert_eq!(answer["result"]["isError"], true);
    let text = answer["result"]["content"][0]["text"].as_str().unwrap();
    let parts: Vec<&str> = text.split("; ").collect();
    assert_eq!(
        parts[0],
        "Invalid arguments for tool \"sum\": values[0]: expected a number, got []"
    );
    assert_eq!(parts[9], "values[9]: expected a number, got []");
    assert_eq!(
        parts[10..],
        ["and more problems (only the first 10 are listed)"]
    );
    client.close();
    server.stop();
}

#[test]
fn a_large_valid_call_reaches_the_tool_whole() {
    let (mut server, mut client, _) = start(Config::default());
    init(&mut client);
    let numbers: Vec<String> = (0..200_000).map(|i| format!("{i}.25")).collect();
    client.send_raw(format!("{}\n", sum_call(1, &numbers.join(","))).as_bytes());
    let job = next_job(&server);
    assert!(job.sent_arguments.is_none(), "read once, then let go");
    let values = job.arguments["values"].as_array().unwrap();
    assert_eq!(values.len(), 200_000);
    let total: f64 = values.iter().map(|v| v.as_f64().unwrap()).sum();
    server.complete(job.id, done_text(&total.to_string()));
    let answer = client.recv();
    assert_eq!(answer["result"]["content"][0]["text"], "19999950000");
    client.close();
    server.stop();
}

#[test]
fn with_arguments_as_text_a_large_call_arrives_checked_but_unread() {
    let config = Config {
        arguments_as_text: true,
        ..Config::default()
    };
    let (mut server, mut client, _) = start(config);
    init(&mut client);
    let numbers: Vec<String> = (0..200_000).map(|i| format!("{i}.25")).collect();
    client.send_raw(format!("{}\n", sum_call(1, &numbers.join(","))).as_bytes());
    let job = next_job(&server);
    assert!(job.arguments.is_empty(), "no tree was built");
    let text = job.sent_arguments.as_deref().expect("the checked text");
    let sent: Value = serde_json::from_str(text).unwrap();
    assert_eq!(sent["values"].as_array().unwrap().len(), 200_000);
    server.complete(job.id, done_text("ok"));
    assert_eq!(client.recv()["result"]["content"][0]["text"], "ok");
    // Refused as without the setting, with the same problems.
    client.send_raw(flood(2, 300_000).as_bytes());
    client.send(json!({"jsonrpc":"2.0","id":"sync","method":"ping"}));
    let mut answers = vec![client.recv()];
    assert!(matches!(
        server.poll(
            Duration::from_millis(100),
            Duration::from_millis(10),
            || false
        ),
        Polled::Idle
    ));
    answers.push(client.recv());
    let answer = answers.into_iter().find(|a| a["id"] == 2).unwrap();
    let text = answer["result"]["content"][0]["text"].as_str().unwrap();
    assert!(
        text.starts_with(
            "Invalid arguments for tool \"sum\": values[0]: expected a number, got []"
        ),
        "{text}"
    );
    client.close();
    server.stop();
}

// --- Panics, back-pressure and ending early ------------------------------
