//! The planted-bug catalogue: empty and zero-cost in the default build,
//! complete and addressable by name with the `planted-bugs` feature.

use lanesim::planted::{Planted, PlantedBug, CATALOGUE};

#[cfg(not(feature = "planted-bugs"))]
#[test]
fn the_default_build_plants_nothing() {
    assert!(
        CATALOGUE.is_empty(),
        "planted bugs compiled into a default build"
    );
    assert_eq!(
        std::mem::size_of::<Planted>(),
        0,
        "the switch is not a compile-time constant"
    );
    assert!(PlantedBug::ALL.iter().all(|bug| !Planted::none().has(*bug)));
}

#[cfg(feature = "planted-bugs")]
#[test]
fn the_feature_build_carries_every_catalogue_entry() {
    let ids: Vec<&str> = CATALOGUE.iter().map(|bug| bug.catalogue_id()).collect();
    assert_eq!(
        ids,
        [
            "1", "2", "3", "4", "5a", "5b", "6", "7", "8", "9", "10", "11", "12", "13", "14", "15",
            "16", "17", "18", "19", "20", "21", "22", "23", "24", "25", "26"
        ]
    );
    for bug in CATALOGUE {
        let planted = Planted::bug(*bug);
        assert_eq!(planted.selected(), Some(*bug));
        // Exactly one switch on at a time.
        assert_eq!(
            CATALOGUE
                .iter()
                .filter(|other| planted.has(**other))
                .count(),
            1
        );
    }
}

#[test]
fn every_switch_has_a_unique_name_that_round_trips() {
    for bug in PlantedBug::ALL {
        assert_eq!(PlantedBug::from_name(bug.name()), Some(bug));
    }
    let mut names: Vec<&str> = PlantedBug::ALL.iter().map(|bug| bug.name()).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), PlantedBug::ALL.len());
    assert_eq!(PlantedBug::from_name("no-such-bug"), None);
}
