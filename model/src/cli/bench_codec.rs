//! `rebalance bench codec`: encode and decode throughput of a typical subscription, ours side
//! by side with the kafka-protocol crate, in the same run (batches interleaved).
//!
//! The message is a v3 subscription of 50 topics with 200 owned partitions (4 per topic), a
//! generation, a rack and 16 bytes of user data. Each implementation runs repeated timed
//! batches in turn; the report gives the median batch as MB/s and messages/s, and the ratio
//! ours/theirs. kafka-protocol decodes only bytes our decoder accepted first.

use std::hint::black_box;
use std::process::ExitCode;
use std::time::Instant;

use bytes::{Bytes, BytesMut};
use kafka_protocol::messages as kp;
use rebalance::{ConsumerProtocolSubscription, TopicPartitions};
use rebalance_proofs::kafka;
use serde::Serialize;

use super::Failure;

/// Arguments of `rebalance bench codec`.
#[derive(clap::Args)]
pub struct BenchCodecArgs {
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
    /// How many timed batches per measurement (the median is reported).
    #[arg(long, default_value_t = 21)]
    batches: usize,
    /// Messages per batch.
    #[arg(long, default_value_t = 2000)]
    batch_messages: usize,
}

/// One measured operation of one implementation.
#[derive(Serialize)]
struct Measurement {
    op: &'static str,
    implementation: &'static str,
    median_ns_per_message: f64,
    median_mb_per_s: f64,
    median_messages_per_s: f64,
}

/// The whole report.
#[derive(Serialize)]
struct Report {
    message: &'static str,
    message_bytes: usize,
    batches: usize,
    batch_messages: usize,
    results: Vec<Measurement>,
    /// Throughput ours / kafka-protocol's (above 1: ours is faster).
    encode_ratio: f64,
    decode_ratio: f64,
}

/// The typical subscription the benchmark measures.
fn typical() -> ConsumerProtocolSubscription {
    let topics: Vec<String> = (0..50)
        .map(|i| format!("orders.events.topic-{i:03}"))
        .collect();
    let owned_partitions = topics
        .iter()
        .enumerate()
        .map(|(i, t)| TopicPartitions {
            topic: t.clone(),
            partitions: (0..4).map(|p| (i as i32) * 7 + p * 3).collect(),
        })
        .collect();
    ConsumerProtocolSubscription {
        version: 3,
        topics,
        user_data: Some((0u8..16).collect()),
        owned_partitions,
        generation_id: 42,
        rack_id: Some("use1-az1".to_owned()),
    }
}

fn kafka_encode(m: &kp::ConsumerProtocolSubscription, version: i16) -> Result<BytesMut, Failure> {
    kafka::encode(m, version).map_err(|e| Failure::violated(e.to_string()))
}

fn kafka_decode(bytes: &Bytes) -> Result<kp::ConsumerProtocolSubscription, Failure> {
    kafka::decode(bytes).map_err(|e| Failure::violated(e.to_string()))
}

/// A benchmarked operation: one call per message.
type Op<'a> = Box<dyn FnMut() -> Result<(), Failure> + 'a>;

/// Times `batches` rounds; in each round every operation runs one batch of `per_batch` calls,
/// in turn, so a change in machine load hits all of them alike. Returns the median
/// nanoseconds per call of each operation.
fn median_ns(batches: usize, per_batch: usize, ops: &mut [Op<'_>]) -> Result<Vec<f64>, Failure> {
    for op in ops.iter_mut() {
        for _ in 0..per_batch.min(200) {
            op()?; // warm up
        }
    }
    let mut times = vec![Vec::with_capacity(batches); ops.len()];
    for _ in 0..batches {
        for (op, t) in ops.iter_mut().zip(&mut times) {
            let start = Instant::now();
            for _ in 0..per_batch {
                op()?;
            }
            t.push(start.elapsed().as_nanos() as f64 / per_batch as f64);
        }
    }
    Ok(times
        .into_iter()
        .map(|mut t| {
            t.sort_by(f64::total_cmp);
            t[t.len() / 2]
        })
        .collect())
}

fn measurement(
    op: &'static str,
    implementation: &'static str,
    ns: f64,
    bytes: usize,
) -> Measurement {
    Measurement {
        op,
        implementation,
        median_ns_per_message: ns,
        median_mb_per_s: bytes as f64 / ns * 1e3,
        median_messages_per_s: 1e9 / ns,
    }
}

/// Runs `rebalance bench codec`.
pub fn run(args: BenchCodecArgs) -> Result<ExitCode, Failure> {
    if args.batches == 0 || args.batch_messages == 0 {
        return Err(Failure::input(
            "--batches and --batch-messages must be at least 1",
        ));
    }
    let ours = typical();
    let encoded = ours
        .encode()
        .map_err(|e| Failure::violated(format!("cannot encode the typical subscription: {e}")))?;
    let their_message = kafka::subscription(&ours);
    if kafka_encode(&their_message, 3)?[..] != encoded[..] {
        return Err(Failure::violated(
            "ours and kafka-protocol encode differently",
        ));
    }
    // kafka-protocol decodes only bytes ours accepted.
    if ConsumerProtocolSubscription::decode(&encoded).as_ref() != Ok(&ours) {
        return Err(Failure::violated(
            "the typical subscription does not round-trip",
        ));
    }
    let shared = Bytes::from(encoded.clone());
    let (b, n) = (args.batches, args.batch_messages);
    let len = encoded.len();

    let mut ops: [Op<'_>; 4] = [
        Box::new(|| {
            black_box(black_box(&ours).encode()).map_err(|e| Failure::violated(e.to_string()))?;
            Ok(())
        }),
        Box::new(|| {
            black_box(kafka_encode(black_box(&their_message), 3)?);
            Ok(())
        }),
        Box::new(|| {
            black_box(ConsumerProtocolSubscription::decode(black_box(&encoded)))
                .map_err(|e| Failure::violated(e.to_string()))?;
            Ok(())
        }),
        Box::new(|| {
            black_box(kafka_decode(black_box(&shared))?);
            Ok(())
        }),
    ];
    let medians = median_ns(b, n, &mut ops)?;
    let [enc_ours, enc_theirs, dec_ours, dec_theirs] = medians[..] else {
        return Err(Failure::violated("expected four measurements"));
    };

    let report = Report {
        message: "subscription v3, 50 topics, 200 owned partitions",
        message_bytes: len,
        batches: b,
        batch_messages: n,
        encode_ratio: enc_theirs / enc_ours,
        decode_ratio: dec_theirs / dec_ours,
        results: vec![
            measurement("encode", "rebalance", enc_ours, len),
            measurement("encode", "kafka-protocol", enc_theirs, len),
            measurement("decode", "rebalance", dec_ours, len),
            measurement("decode", "kafka-protocol", dec_theirs, len),
        ],
    };
    if args.json {
        let text = serde_json::to_string_pretty(&report)
            .map_err(|e| Failure::violated(format!("cannot print the report: {e}")))?;
        println!("{text}");
    } else {
        println!(
            "codec bench: {} ({} bytes), median of {} batches of {} messages",
            report.message, report.message_bytes, report.batches, report.batch_messages
        );
        println!(
            "{:<8} {:<15} {:>10} {:>10} {:>12}",
            "op", "impl", "ns/msg", "MB/s", "msgs/s"
        );
        for m in &report.results {
            println!(
                "{:<8} {:<15} {:>10.0} {:>10.1} {:>12.0}",
                m.op,
                m.implementation,
                m.median_ns_per_message,
                m.median_mb_per_s,
                m.median_messages_per_s
            );
        }
        println!(
            "ours/theirs throughput: encode {:.2}x, decode {:.2}x",
            report.encode_ratio, report.decode_ratio
        );
    }
    Ok(ExitCode::SUCCESS)
}
