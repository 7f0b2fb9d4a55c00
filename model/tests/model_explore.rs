//! Starts `rebalance explore` on a free port and fetches the Explorer page, its status and the
//! initial state over plain HTTP/1.0.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn get(port: u16, path: &str) -> Option<(String, String)> {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .ok()?;
    write!(stream, "GET {path} HTTP/1.0\r\nHost: localhost\r\n\r\n").ok()?;
    let mut text = String::new();
    stream.read_to_string(&mut text).ok()?;
    let (head, body) = text.split_once("\r\n\r\n")?;
    Some((head.to_owned(), body.to_owned()))
}

#[test]
fn explorer_serves_its_page_status_and_states() {
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let _server = Server(
        Command::new(env!("CARGO_BIN_EXE_rebalance"))
            .args([
                "explore",
                "--port",
                &port.to_string(),
                "--protocol",
                "eager",
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let start = Instant::now();
    let (head, page) = loop {
        if let Some(r) = get(port, "/") {
            break r;
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "explorer did not start"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(
        head.starts_with("HTTP/1.") && head.contains(" 200"),
        "{head}"
    );
    assert!(
        page.contains("<html") || page.contains("<!DOCTYPE"),
        "not a page"
    );
    let (_, status) = get(port, "/.status").unwrap();
    assert!(status.contains("unique_state_count"), "{status}");
    let (head, states) = get(port, "/.states").unwrap();
    assert!(head.contains(" 200"), "{head}");
    assert!(states.contains("coordinator"), "no state in {states}");
    // A wrong path is refused.
    let (head, _) = get(port, "/.states/12345").unwrap();
    assert!(head.contains(" 404"), "{head}");
}
