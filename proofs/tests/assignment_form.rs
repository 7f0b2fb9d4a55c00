//! The crate's flat `Assignment` holds exactly the content of the plain maps it is built from:
//! for arbitrary maps (members with no lists, empty lists, unsorted and repeated partitions),
//! converting to the flat form and back, through JSON, and reading single lists give the map's
//! content, and two flat forms are equal exactly when their maps are. The maps are the oracle
//! (`BTreeMap`'s own semantics); nothing here reads the flat form's internals.

use std::collections::BTreeMap;

use proptest::prelude::*;
use rebalance::{Assignment, AssignmentMap, MemberId};

fn map() -> impl Strategy<Value = AssignmentMap> {
    let lists =
        prop::collection::btree_map("T[0-9]{0,2}", prop::collection::vec(-2i32..40, 0..6), 0..5);
    prop::collection::btree_map("[a-c]{1,3}".prop_map(MemberId), lists, 0..6)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn the_flat_form_keeps_the_maps_content(map in map(), other in map()) {
        let flat = Assignment::from(map.clone());
        prop_assert_eq!(flat.to_map(), map.clone());
        prop_assert_eq!(Assignment::from_json(&flat.to_json()).ok(), Some(flat.clone()));
        prop_assert_eq!(flat.len(), map.len());
        for (id, lists) in &map {
            let topics = flat.member(id.as_str());
            prop_assert_eq!(topics.map(|t| t.len()), Some(lists.len()));
            prop_assert_eq!(
                topics.map(|t| t.partition_count()),
                Some(lists.values().map(Vec::len).sum::<usize>())
            );
            for (topic, parts) in lists {
                prop_assert_eq!(flat.partitions(id.as_str(), topic), Some(parts.as_slice()));
            }
            prop_assert_eq!(flat.partitions(id.as_str(), "absent"), None);
        }
        prop_assert_eq!(Assignment::from(other.clone()) == flat, other == map);
    }
}

#[test]
fn a_member_or_list_not_in_the_map_is_not_in_the_flat_form() {
    let map: AssignmentMap = BTreeMap::from([(
        MemberId::from("A"),
        BTreeMap::from([("T".to_owned(), vec![1])]),
    )]);
    let flat = Assignment::from(map);
    assert!(flat.member("B").is_none());
    assert_eq!(flat.partitions("A", "U"), None);
    assert_eq!(flat.partitions("A", "T"), Some(&[1][..]));
}
