//! Each client's share of what the server holds for its clients, so that no
//! one client can take all of it: long-lived streams, sessions, and checks
//! of tokens the server has not seen.
//!
//! A client is the holder of a token when the server requires tokens (what
//! owns its tasks: see [`super::security::task_owner`]), and otherwise the
//! address it connects from. An IPv6 client is its /64 network, since one
//! machine usually has a whole /64 to pick source addresses from.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// Who a share is counted against.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Client {
    /// The holder of a token (the owner of what it starts).
    Holder(crate::stores::tasks::Owner),
    /// A peer address without tokens (an IPv6 one cut to its /64).
    Peer(IpAddr),
}

impl Client {
    /// The holder if there is one, else the peer.
    pub fn of(owner: Option<crate::stores::tasks::Owner>, peer: IpAddr) -> Client {
        match owner {
            Some(owner) => Client::Holder(owner),
            None => Client::peer(peer),
        }
    }

    /// The peer, whatever the token.
    pub fn peer(peer: IpAddr) -> Client {
        Client::Peer(network_of(peer))
    }
}

/// An address as the client it counts as: IPv4 (and IPv4-mapped IPv6)
/// whole, other IPv6 addresses by their /64 network.
pub fn network_of(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V4(_) => ip,
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => {
                let mut segments = v6.segments();
                segments[4..].fill(0);
                IpAddr::V6(segments.into())
            }
        },
    }
}

use crate::util::threads::lock;

/// How many of something each client holds, each at most `limit`.
pub struct Shares {
    held: Mutex<HashMap<Client, usize>>,
    limit: usize,
}

impl Shares {
    pub fn new(limit: usize) -> Arc<Shares> {
        Arc::new(Shares {
            held: Mutex::new(HashMap::new()),
            limit,
        })
    }

    /// One more for `client`, or `None` if it holds its limit already. The
    /// share is given back when dropped (and a client that holds none is
    /// forgotten, so the map holds only clients holding something).
    pub fn take(self: &Arc<Self>, client: Client) -> Option<Share> {
        let mut held = lock(&self.held);
        let count = held.entry(client).or_insert(0);
        if *count >= self.limit {
            if *count == 0 {
                held.remove(&client);
            }
            return None;
        }
        *count += 1;
        Some(Share {
            shares: self.clone(),
            client,
        })
    }

    /// How many `client` holds.
    pub fn held_by(&self, client: &Client) -> usize {
        lock(&self.held).get(client).copied().unwrap_or(0)
    }

    pub fn limit(&self) -> usize {
        self.limit
    }
}

/// One client's share of something, given back when dropped.
pub struct Share {
    shares: Arc<Shares>,
    client: Client,
}

impl Drop for Share {
    fn drop(&mut self) {
        let mut held = lock(&self.shares.held);
        if let Some(count) = held.get_mut(&self.client) {
            *count -= 1;
            if *count == 0 {
                held.remove(&self.client);
            }
        }
    }
}

/// A place among the server's long-lived streams, and among its client's:
/// held for the life of the stream.
pub struct Place {
    _server: OwnedSemaphorePermit,
    _client: Share,
}

/// Why no place was had.
#[derive(Debug, PartialEq, Eq)]
pub enum NoPlace {
    /// The client holds its share already.
    Client(usize),
    /// The server holds its most.
    Server(usize),
}

/// Takes a place for `client`: its own share first, so a client at its
/// limit never takes one of the server's places from others.
pub fn take_place(
    server: &Arc<Semaphore>,
    server_limit: usize,
    shares: &Arc<Shares>,
    client: Client,
) -> Result<Place, NoPlace> {
    let share = shares.take(client).ok_or(NoPlace::Client(shares.limit()))?;
    let permit = server
        .clone()
        .try_acquire_owned()
        .map_err(|_| NoPlace::Server(server_limit))?;
    Ok(Place {
        _server: permit,
        _client: share,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{Ipv4Addr, Ipv6Addr};

    #[test]
    fn ipv6_peers_count_by_their_network() {
        let a: IpAddr = "2001:db8:1:2:aaaa::1".parse().unwrap();
        let b: IpAddr = "2001:db8:1:2:bbbb::9".parse().unwrap();
        let c: IpAddr = "2001:db8:1:3::1".parse().unwrap();
        assert_eq!(Client::peer(a), Client::peer(b));
        assert_ne!(Client::peer(a), Client::peer(c));
        let mapped = IpAddr::V6(Ipv4Addr::new(10, 0, 0, 1).to_ipv6_mapped());
        assert_eq!(
            Client::peer(mapped),
            Client::peer(IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1)))
        );
        assert_ne!(
            Client::peer(IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1))),
            Client::peer(IpAddr::V4(Ipv4Addr::new(10, 0, 0, 2)))
        );
        assert_eq!(
            Client::peer(IpAddr::V6(Ipv6Addr::LOCALHOST)),
            Client::Peer(IpAddr::V6(Ipv6Addr::UNSPECIFIED))
        );
    }

    #[test]
    fn a_client_holds_its_share_and_gets_it_back() {
        let shares = Shares::new(2);
        let ann = Client::Holder([1; 32]);
        let bob = Client::Holder([2; 32]);
        let first = shares.take(ann).unwrap();
        let _second = shares.take(ann).unwrap();
        assert!(shares.take(ann).is_none(), "at its limit");
        assert!(shares.take(bob).is_some(), "others are not held up");
        drop(first);
        assert!(shares.take(ann).is_some());
        assert_eq!(lock(&shares.held).len(), 1, "bob holds nothing any more");
    }

    #[test]
    fn a_client_at_its_limit_takes_none_of_the_servers_places() {
        let server = Arc::new(Semaphore::new(3));
        let shares = Shares::new(2);
        let ann = Client::Holder([1; 32]);
        let held: Vec<Place> = (0..2)
            .map(|_| take_place(&server, 3, &shares, ann).unwrap())
            .collect();
        assert_eq!(
            take_place(&server, 3, &shares, ann).err(),
            Some(NoPlace::Client(2))
        );
        assert_eq!(server.available_permits(), 1);
        let bob = take_place(&server, 3, &shares, Client::Holder([2; 32])).unwrap();
        assert_eq!(
            take_place(&server, 3, &shares, Client::Holder([3; 32])).err(),
            Some(NoPlace::Server(3))
        );
        assert_eq!(shares.held_by(&Client::Holder([3; 32])), 0);
        drop((held, bob));
        assert_eq!(server.available_permits(), 3);
    }
}
