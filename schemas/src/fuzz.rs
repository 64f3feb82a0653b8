//! Property tests that run by count in `cargo test` and by time in
//! `bench/fuzz.sh`: with `CODE_INDEX_FUZZ_SECONDS=N` each target runs for
//! N seconds (`CODE_INDEX_FUZZ=name` picks one target). A failure panics with
//! the shrunk input, which then goes into the target's regression list.

use std::time::{Duration, Instant};

use proptest::strategy::Strategy;
use proptest::test_runner::{Config, TestCaseError, TestRunner};

/// Cases per target in an ordinary test run.
pub const CI_CASES: u32 = 512;

/// Run `test` on values of `strategy`: [`CI_CASES`] of them, or for
/// `CODE_INDEX_FUZZ_SECONDS` seconds. Prints how many cases ran.
pub fn run<S: Strategy>(
    name: &str,
    strategy: S,
    test: impl Fn(S::Value) -> Result<(), TestCaseError>,
) where
    S::Value: std::fmt::Debug,
{
    let secs = std::env::var("CODE_INDEX_FUZZ_SECONDS")
        .ok()
        .and_then(|s| s.parse::<u64>().ok());
    if let Ok(only) = std::env::var("CODE_INDEX_FUZZ") {
        if secs.is_some() && !only.split(',').any(|o| o == name) {
            return;
        }
    }
    let t0 = Instant::now();
    let deadline = secs.map(|s| t0 + Duration::from_secs(s));
    let chunk = if deadline.is_some() { 2_000 } else { CI_CASES };
    let mut total: u64 = 0;
    let mut round: u32 = 0;
    loop {
        let config = Config {
            cases: chunk,
            failure_persistence: None,
            // A new seed each round: a time-bounded run explores further.
            rng_seed: proptest::test_runner::RngSeed::Fixed(0x5eed_0000 + round as u64),
            ..Config::default()
        };
        let mut runner = TestRunner::new(config);
        if let Err(e) = runner.run(&strategy, &test) {
            panic!("fuzz target {name} failed after {total} cases: {e}");
        }
        total += chunk as u64;
        round += 1;
        match deadline {
            Some(d) if Instant::now() < d => continue,
            _ => break,
        }
    }
    if secs.is_some() {
        eprintln!(
            "fuzz {name}: {total} cases in {:.0} s, no failure",
            t0.elapsed().as_secs_f64()
        );
    }
}
