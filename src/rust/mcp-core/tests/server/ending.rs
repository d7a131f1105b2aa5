//! A client that vanishes, and the interrupt check that ends a wait.

use super::*;

#[test]
fn a_vanished_client_ends_the_server() {
    let (server_in, mut client_out) = pipe();
    let (client_in, server_out) = pipe();
    let interrupts = Arc::new(AtomicUsize::new(0));
    let counter = interrupts.clone();
    let mut server = Server::start(
        Config::default(),
        Registry::new(tools()).unwrap(),
        server_in,
        server_out,
        None,
        Interrupter::new(
            move || {
                counter.fetch_add(1, Ordering::SeqCst);
            },
            || {},
        ),
    )
    .unwrap();
    // The client stops reading (its end of our stdout closes) mid-call.
    drop(client_in);
    writeln!(
        client_out,
        "{}",
        json!({"jsonrpc":"2.0","id":1,"method":"ping"})
    )
    .unwrap();
    writeln!(
        client_out,
        "{}",
        json!({"jsonrpc":"2.0","id":2,"method":"ping"})
    )
    .unwrap();
    let t0 = Instant::now();
    loop {
        match server.poll(Duration::from_secs(5), Duration::from_millis(10), || false) {
            Polled::Finished => break,
            Polled::Idle if t0.elapsed() < Duration::from_secs(5) => continue,
            other => panic!("{other:?}"),
        }
    }
    server.stop();
}

#[test]
fn the_interrupt_check_ends_a_wait() {
    let (mut server, mut client, _) = start(Config::default());
    let mut asked = 0;
    let polled = server.poll(Duration::from_secs(10), Duration::from_millis(5), || {
        asked += 1;
        asked == 3
    });
    assert!(matches!(polled, Polled::Interrupted));
    assert!(matches!(
        server.poll(Duration::from_millis(30), Duration::from_millis(10), || {
            false
        }),
        Polled::Idle
    ));
    client.close();
    server.stop();
}
