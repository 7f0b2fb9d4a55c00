//! Fuzz target `assignor`: small valid group specs built from the fuzzer's bytes, assigned by
//! uniform-v2 and checked for all six properties (validity, spread, balance, rack alignment and
//! stickiness against an oracle's optimum; determinism; the fixed point).

use arbitrary::{Arbitrary, Unstructured};
use rebalance::{Assignment, Assignor, GroupSpec, SpecError, UniformV2};

use crate::assignor::generate::{self, Bounds};
use crate::assignor::{REORDERINGS, check_assignor};

/// The size limits of fuzzed groups: small enough that the oracle stays fast (brute force up
/// to its limit, then the flow).
pub const CASE_BOUNDS: Bounds = Bounds {
    members: 4,
    topics: 3,
    partitions: 4,
    racks: 3,
};

/// One fuzz input: a valid group spec within [`CASE_BOUNDS`], possibly with unknown
/// subscriptions, stale, conflicting and out-of-range claims.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AssignorCase {
    /// The group to assign.
    pub spec: GroupSpec,
}

impl<'a> Arbitrary<'a> for AssignorCase {
    fn arbitrary(u: &mut Unstructured<'a>) -> arbitrary::Result<Self> {
        Ok(AssignorCase {
            spec: generate::spec(u, &CASE_BOUNDS),
        })
    }
}

/// The assignor under test.
fn uniform_v2(spec: &GroupSpec) -> Result<Assignment, SpecError> {
    UniformV2.assign(spec)
}

/// Runs one fuzz input.
///
/// # Panics
/// With the spec and the checker's report when uniform-v2 breaks a property.
pub fn assignor(data: &[u8]) {
    let Ok(case) = AssignorCase::arbitrary_take_rest(Unstructured::new(data)) else {
        return;
    };
    let report = check_assignor(&case.spec, uniform_v2, &REORDERINGS, None);
    assert!(
        report.is_ok(),
        "uniform-v2 breaks a property on\n{}\n{report}",
        case.spec.to_json()
    );
}
