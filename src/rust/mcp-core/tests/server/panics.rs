//! A panicking server thread stops the server with a clear message.

use super::*;

#[test]
fn a_panic_on_the_reader_thread_stops_the_server_with_a_clear_message() {
    let (mut server, client_out, client_in) = start_raw(Config::default(), panicking_interrupt());
    let mut client = reading_client(client_out, client_in);
    init(&mut client);
    client.send(call(1, "echo"));
    let job = next_job(&server);
    // The reader thread cancels the running job, and the interrupt panics.
    client
        .send(json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}));
    let Polled::Failed(message) = poll_until_done(&server) else {
        panic!("the server must say it failed");
    };
    assert_eq!(
        message,
        "mcpserver: internal error on the reader thread: injected fault"
    );
    server.complete(job.id, Outcome::Cancelled);
    server.stop();
}

#[test]
fn a_panic_on_the_timers_thread_stops_the_server_with_a_clear_message() {
    let (mut server, client_out, client_in) = start_raw(Config::default(), panicking_interrupt());
    let mut client = reading_client(client_out, client_in);
    init(&mut client);
    client.send(call(1, "slow"));
    let job = next_job(&server);
    // Its 300 ms limit passes; interrupting it panics on the timers thread.
    let Polled::Failed(message) = poll_until_done(&server) else {
        panic!("the server must say it failed");
    };
    assert_eq!(
        message,
        "mcpserver: internal error on the timers thread: injected fault"
    );
    server.complete(job.id, done_text("late"));
    server.stop();
}
