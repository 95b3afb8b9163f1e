//! Communicators on 1, 2 and 4 ranks: queries, split, dup, create_group,
//! placement, and the model-parallel rank groups.

mod common;

use common::on_ranks;
use smd::{Communicator, GroupKind, GroupsConfig, Op};

const SIZES: [usize; 3] = [1, 2, 4];

/// The sum of `members`' world ranks, computed by an all-reduce over `comm`.
fn sum_of_world_ranks(comm: &Communicator, world_rank: usize) -> u64 {
    let mut v = [world_rank as u64];
    comm.all_reduce(&mut v, Op::Sum).unwrap();
    v[0]
}

#[test]
fn queries() {
    on_ranks("queries", &SIZES, |world| {
        let (rank, size) = (world.rank(), world.size());
        assert!(rank < size);
        // smdrun runs every rank on one node.
        assert_eq!((world.local_rank(), world.local_size()), (rank, size));
        assert_eq!((world.node_index(), world.node_count()), (0, 1));
        assert_eq!(world.world_rank(rank).unwrap(), rank);
        assert_eq!(world.async_error().unwrap(), None);
        for r in 0..size {
            let info = world.rank_info(r).unwrap();
            assert_eq!((info.rank, info.world_rank, info.node_index), (r, r, 0));
            assert_eq!(info.local_size, size);
            assert!(!info.host.is_empty() && info.cpus >= 1);
        }
        assert_eq!(world.rank_info(rank).unwrap().pid, std::process::id());
        assert!(format!("{world:?}").contains(&format!("rank: {rank}")));
    });
}

#[test]
fn stats_count_collectives_and_name_the_algorithm() {
    on_ranks("stats_count_collectives_and_name_the_algorithm", &SIZES, |world| {
        let before = world.stats().unwrap();
        let mut v = vec![1.0f32; 1000];
        world.all_reduce(&mut v, Op::Sum).unwrap();
        let after = world.stats().unwrap();
        assert_eq!(after.collectives, before.collectives + 1);
        let expected = if world.size() == 1 { "single" } else { "direct" };
        assert_eq!(after.last_algorithm, expected);
        // One node: nothing crosses nodes.
        assert_eq!(after.inter_node_bytes_sent, 0);
        assert!(after.transports.iter().all(|t| !t.name.is_empty()));
    });
}

#[test]
fn split_dup_create_group() {
    on_ranks("split_dup_create_group", &SIZES, |world| {
        let (rank, size) = (world.rank(), world.size());

        // Odd and even ranks, ordered by descending rank.
        let half = world
            .split(Some((rank % 2) as u32), -(rank as i32))
            .unwrap()
            .unwrap();
        let members: Vec<usize> = (0..size).filter(|r| r % 2 == rank % 2).rev().collect();
        assert_eq!(half.size(), members.len());
        assert_eq!(members[half.rank()], rank);
        assert_eq!(half.world_rank(0).unwrap(), members[0]);
        assert_eq!(
            sum_of_world_ranks(&half, rank),
            members.iter().sum::<usize>() as u64
        );

        // Only rank 0 in a communicator; the others in none.
        let alone = world.split((rank == 0).then_some(7), 0).unwrap();
        assert_eq!(alone.map(|c| c.size()), (rank == 0).then_some(1));

        let copy = world.dup().unwrap();
        assert_eq!((copy.rank(), copy.size()), (rank, size));
        assert_eq!(
            sum_of_world_ranks(&copy, rank),
            (size * (size - 1) / 2) as u64
        );
        drop(copy);

        // The last rank and rank 0, in that order; only they call it.
        let listed = if size == 1 {
            vec![0]
        } else {
            vec![size - 1, 0]
        };
        if listed.contains(&rank) {
            let pair = world.create_group(&listed).unwrap();
            assert_eq!(pair.size(), listed.len());
            assert_eq!(pair.rank(), if rank == size - 1 { 0 } else { 1 });
            pair.barrier().unwrap();
        }
        world.barrier().unwrap();
    });
}

#[test]
fn groups() {
    on_ranks("groups", &SIZES, |world| {
        let (rank, size) = (world.rank(), world.size());
        let configs = [
            GroupsConfig::new(1, 1),
            GroupsConfig::new(size.min(2), 1).placement("spread"),
            GroupsConfig::new(1, size.min(2)).placement("cluster"),
            GroupsConfig::new(size.min(2), size / size.min(2)).placement("PTD"),
        ];
        for config in &configs {
            let groups = world.groups(config).unwrap();
            for kind in GroupKind::ALL {
                let layout = config.layout(size, rank, kind).unwrap();
                let comm = groups.comm(kind);
                assert_eq!(
                    groups.members(kind),
                    &layout.members[..],
                    "{config:?} {kind:?}"
                );
                assert_eq!(groups.rank(kind), layout.group_rank);
                assert_eq!(groups.size(kind), layout.members.len());
                assert_eq!(
                    (comm.rank(), comm.size()),
                    (layout.group_rank, layout.members.len())
                );
                let sum: usize = layout.members.iter().sum();
                assert_eq!(
                    sum_of_world_ranks(comm, rank),
                    sum as u64,
                    "{config:?} {kind:?}"
                );
            }
            assert_eq!(groups.world().size(), size);
            assert_eq!(
                groups.tp().size() * groups.pp().size() * groups.rdp().size(),
                size
            );
            assert_eq!(groups.dp().size(), groups.tp().size() * groups.rdp().size());
            assert_eq!(groups.mp().size(), groups.tp().size() * groups.pp().size());
        }
    });
}

#[test]
fn groups_that_do_not_fit_fail_on_every_rank() {
    on_ranks(
        "groups_that_do_not_fit_fail_on_every_rank",
        &SIZES,
        |world| {
            let e = world.groups(&GroupsConfig::new(3, 1)).unwrap_err();
            assert_eq!(e.code(), smd::ErrorCode::InvalidArgument, "{e}");
            assert!(e.message().contains("smd_groups_create"), "{e}");
            // The world is still usable.
            world.barrier().unwrap();
        },
    );
}
