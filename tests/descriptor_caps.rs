//! A node fits its inbound caps within the process's descriptor limit when
//! it starts: at `nofile` 256 the default caps (256 handshakes, 1,024
//! connections) never bound, and a flood took every descriptor instead, so
//! honest dials timed out until some were free. It lowers them (one WARN
//! line with both figures) and refuses to start where the limit leaves no
//! room to serve.
//!
//! Its own test binary, with one test: the limit is the process's.
#![cfg(unix)]

mod common;

use std::sync::Arc;

use common::capture::Captured;
use common::served::config;
use common::set_soft_limit;
use lanesim::distribution::{
    ConnectionManager, NodeName, DEFAULT_MAX_CONNECTIONS, MIN_CONNECTIONS, RESERVED_DESCRIPTORS,
};
use lanesim::shim::net::TokioTcp;

#[tokio::test]
async fn a_node_lowers_its_caps_to_the_descriptor_limit_or_refuses_to_start() {
    let captured = Captured::default();
    let _log = captured.install();
    let before = set_soft_limit(256);
    let node = ConnectionManager::new(NodeName::from("low@test"), Arc::new(TokioTcp), config());
    let too_low = {
        set_soft_limit(RESERVED_DESCRIPTORS + MIN_CONNECTIONS - 1);
        ConnectionManager::new(NodeName::from("lower@test"), Arc::new(TokioTcp), config())
    };
    // SAFETY: as above.
    unsafe {
        assert_eq!(libc::setrlimit(libc::RLIMIT_NOFILE, &before), 0);
    }
    let node = node.expect("a node starts at nofile 256");
    let (handshakes, connections) = node.inbound_caps();
    assert_eq!(connections, 256 - RESERVED_DESCRIPTORS);
    assert!((1..256).contains(&handshakes), "{handshakes}");
    // One source never holds every place of the lowered caps.
    assert_eq!(node.source_caps(), (handshakes / 2, connections / 2));
    let warned = captured.matching(&["WARN", "caps lowered", "limit=256"]);
    assert_eq!(warned.len(), 1, "{:#?}", captured.records());
    assert!(
        warned[0].contains(&format!("was={DEFAULT_MAX_CONNECTIONS}")),
        "{}",
        warned[0]
    );
    let Err(error) = too_low else {
        panic!("a node started with no room to serve")
    };
    assert_eq!(error.kind(), std::io::ErrorKind::InvalidInput);
    assert!(error.to_string().contains("ulimit -n"), "{error}");
}
