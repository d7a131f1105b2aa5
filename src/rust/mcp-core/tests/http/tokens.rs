//! Bearer tokens checked by the server's R function: made-up or hanging
//! checks never hold up known callers.

use super::*;

#[test]
fn made_up_tokens_never_hold_up_callers_whose_token_is_known() {
    let h = start_token_checked();
    assert_eq!(timed_call(h.address, None, "good").0, 200);
    let stop = Arc::new(AtomicBool::new(false));
    let attackers = flood(h.address, &stop, |n| format!("guess-{n}"));
    std::thread::sleep(Duration::from_millis(500));
    let mut waits = Vec::new();
    for n in 0..20u8 {
        let (status, took) = timed_call(h.address, None, "good");
        assert_eq!(status, 200);
        waits.push(took);
        if n % 4 == 0 {
            // A new user from another address is let in meanwhile: its
            // check takes its turn among those of the flooding client.
            let source = IpAddr::from([127, 0, 0, 10 + n / 4]);
            let (status, took) = timed_call(h.address, Some(source), &format!("new-{n}"));
            assert_eq!(status, 200, "a new valid user, after {took:?}");
            assert!(took < Duration::from_secs(2), "a new user waited {took:?}");
        }
    }
    stop.store(true, Ordering::SeqCst);
    let statuses: Vec<u16> = attackers
        .into_iter()
        .flat_map(|t| t.join().unwrap())
        .collect();
    waits.sort();
    // At most the one check R runs as the call arrives (200 ms) comes
    // first: no queue of them.
    assert!(
        waits[waits.len() / 2] < Duration::from_millis(400),
        "{waits:?}"
    );
    assert!(waits[waits.len() - 1] < Duration::from_secs(1), "{waits:?}");
    // The flooding client has only a few tokens checked at once.
    assert!(
        statuses.contains(&401) && statuses.contains(&429),
        "{statuses:?}"
    );
    assert!(!statuses.contains(&200));
}

#[test]
fn a_hanging_token_check_gives_way_to_known_callers() {
    let h = start_token_checked();
    assert_eq!(timed_call(h.address, None, "good").0, 200);
    let stop = Arc::new(AtomicBool::new(false));
    let attackers = flood(h.address, &stop, |n| format!("hang-{n}"));
    std::thread::sleep(Duration::from_millis(800));
    let mut waits = Vec::new();
    for _ in 0..10 {
        let (status, took) = timed_call(h.address, None, "good");
        assert_eq!(status, 200);
        waits.push(took);
        std::thread::sleep(Duration::from_millis(100));
    }
    stop.store(true, Ordering::SeqCst);
    let statuses: Vec<u16> = attackers
        .into_iter()
        .flat_map(|t| t.join().unwrap())
        .collect();
    waits.sort();
    // A check holding R is stopped a slice after a known caller's call
    // arrives, instead of running to its time limit (5 s here).
    assert!(waits[waits.len() - 1] < Duration::from_secs(1), "{waits:?}");
    assert!(
        statuses.contains(&503),
        "stopped checks are retried: {statuses:?}"
    );
}
