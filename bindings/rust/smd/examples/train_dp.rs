//! Data-parallel training through smd, in Rust: linear regression by SGD.
//!
//! Every rank holds the whole model (8 weights and a bias) and trains it on
//! the same stream of global batches. Each step, rank r computes the
//! gradient of its contiguous shard of the global batch, and one all-reduce
//! (sum) over a single buffer adds up the shards' gradients — and their
//! losses, riding along — so every rank applies the same update and the
//! replicas never drift apart. Rank 0 first broadcasts the initial weights.
//!
//! At the end rank 0 trains the model again alone, without communicating,
//! on the same global batches, and compares the two runs step by step (a
//! converged model alone would hide a broken all-reduce: both runs would
//! reach the same optimum). It prints the largest difference and PASS or
//! FAIL; every rank exits 1 on FAIL.
//!
//! ```sh
//! cargo build --example train_dp
//! build/tools/smdrun -n 4 target/debug/examples/train_dp    # 4 ranks
//! target/debug/examples/train_dp --steps 500                # 1 rank
//! ```
//! (Outside cargo, libsmd must be on the loader's path:
//! `LD_LIBRARY_PATH=build/src`.)

use std::process::ExitCode;

use smd::{Communicator, Op};

/// Number of input features.
const FEATURES: usize = 8;
/// Parameters: the weights, then the bias.
const PARAMS: usize = FEATURES + 1;
/// The gradient buffer has one more slot, for the shard's summed loss.
const LOSS: usize = PARAMS;

const DATA_SEED: u64 = 0x005e_ed0f_da7a;
const INIT_SEED: u64 = 0x0014_17a1_b0c5;

/// Both models must agree within this much, relative to the largest
/// parameter: summing in another order changes the last bits only.
const TOLERANCE: f64 = 1e-4;

struct Config {
    steps: usize,
    /// Global batch: samples per step over all ranks.
    batch: usize,
    lr: f32,
}

/// splitmix64: every rank draws the same numbers from the same seed.
fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Uniform in [-1, 1).
fn uniform(state: &mut u64) -> f32 {
    ((splitmix64(state) >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
}

/// Sample `index` of the endless stream: y = w*·x + b* + noise. Random access
/// by index lets each rank make only its shard while the single-process
/// reference makes the whole batch — the same numbers either way.
fn sample(index: u64) -> ([f32; FEATURES], f32) {
    let mut teacher = DATA_SEED;
    let mut s = DATA_SEED ^ index.wrapping_mul(0xd1b5_4a32_d192_ed03);
    splitmix64(&mut s);
    let mut x = [0.0; FEATURES];
    let mut y = uniform(&mut teacher); // b*
    for xi in &mut x {
        *xi = uniform(&mut s);
        y += 2.0 * uniform(&mut teacher) * *xi; // w*_i in [-2, 2)
    }
    (x, y + 0.01 * uniform(&mut s))
}

fn initial_params() -> Vec<f32> {
    let mut s = INIT_SEED;
    (0..PARAMS).map(|_| 0.1 * uniform(&mut s)).collect()
}

/// What a training run leaves: the parameters after every step, and the
/// mean loss of the last step.
struct Run {
    trajectory: Vec<f32>,
    loss: f64,
}

/// Trains `params` in place. With a communicator this rank trains on its
/// shard and the all-reduce makes each step global; without one it is the
/// single-process run (the whole batch here). The same code either way,
/// which is the point of the comparison.
fn train(config: &Config, params: &mut [f32], comm: Option<&Communicator>) -> smd::Result<Run> {
    let (rank, size) = comm.map_or((0, 1), |c| (c.rank(), c.size()));
    let shard = config.batch / size;
    let scale = 1.0 / config.batch as f32;
    let mut run = Run {
        trajectory: Vec::with_capacity(config.steps * PARAMS),
        loss: 0.0,
    };
    for step in 0..config.steps {
        // Sums, not means: dividing by the global batch after the all-reduce
        // makes a shard's contribution independent of the number of ranks.
        let mut grad = [0.0f32; PARAMS + 1];
        let first = (step * config.batch + rank * shard) as u64;
        for index in first..first + shard as u64 {
            let (x, y) = sample(index);
            let pred = params[FEATURES]
                + x.iter()
                    .zip(&params[..FEATURES])
                    .map(|(a, w)| a * w)
                    .sum::<f32>();
            let err = pred - y;
            for (g, xi) in grad[..FEATURES].iter_mut().zip(&x) {
                *g += 2.0 * err * xi;
            }
            grad[FEATURES] += 2.0 * err;
            grad[LOSS] += err * err;
        }
        if let Some(comm) = comm {
            comm.all_reduce(&mut grad, Op::Sum)?;
        }
        for (p, g) in params.iter_mut().zip(&grad[..PARAMS]) {
            *p -= config.lr * g * scale;
        }
        run.trajectory.extend_from_slice(params);
        run.loss = f64::from(grad[LOSS] * scale);
        if comm.is_some_and(|c| c.rank() == 0) && (step == 0 || (step + 1) % 100 == 0) {
            println!("step {:4} loss {:.6}", step + 1, run.loss);
        }
    }
    Ok(run)
}

/// The largest element-wise difference of two equally long slices.
fn max_diff(a: &[f32], b: &[f32]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| f64::from((x - y).abs()))
        .fold(0.0, f64::max)
}

fn parse_args() -> Result<Config, String> {
    let mut config = Config {
        steps: 300,
        batch: 64,
        lr: 0.1,
    };
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let value = args.next().ok_or(format!("{flag} needs a value"))?;
        let bad = || format!("bad value for {flag}: {value}");
        match flag.as_str() {
            "--steps" => config.steps = value.parse().map_err(|_| bad())?,
            "--batch" => config.batch = value.parse().map_err(|_| bad())?,
            "--lr" => config.lr = value.parse().map_err(|_| bad())?,
            _ => {
                return Err(format!(
                    "unknown option {flag} (--steps N, --batch B, --lr LR)"
                ));
            }
        }
    }
    Ok(config)
}

fn run(config: &Config) -> smd::Result<bool> {
    // Rank and size from the launcher (smdrun, torchrun, mpirun, Slurm);
    // without one, a one-rank world.
    let world = Communicator::init()?;
    if config.batch == 0 || config.batch % world.size() != 0 {
        return Err(smd::Error::new(
            smd::ErrorCode::InvalidArgument,
            format!(
                "--batch {} is not a positive multiple of the {} ranks",
                config.batch,
                world.size()
            ),
        ));
    }
    if world.rank() == 0 {
        println!(
            "train_dp (Rust): {} rank(s), linear regression on {FEATURES} features, {} steps, global batch {}",
            world.size(),
            config.steps,
            config.batch
        );
    }

    // The same starting point everywhere: rank 0's, broadcast (the others
    // start from zeros to show that the broadcast is what sets them).
    let mut params = if world.rank() == 0 {
        initial_params()
    } else {
        vec![0.0; PARAMS]
    };
    world.broadcast(&mut params, 0)?;
    let run = train(config, &mut params, Some(&world))?;

    // The replicas must be identical: the element-wise maximum and minimum
    // over the ranks agree.
    let (mut high, mut low) = (vec![0.0f32; PARAMS], vec![0.0f32; PARAMS]);
    world.all_reduce_into(&params, &mut high, Op::Max)?;
    world.all_reduce_into(&params, &mut low, Op::Min)?;
    let replicas_differ = max_diff(&high, &low);

    // Rank 0 checks against a single-process run; everyone learns the verdict.
    let mut verdict = [0i32];
    if world.rank() == 0 {
        let mut single_params = initial_params();
        let single = train(config, &mut single_params, None)?;
        let largest = single
            .trajectory
            .iter()
            .fold(1.0f64, |m, &p| m.max(f64::from(p.abs())));
        let diff = max_diff(&run.trajectory, &single.trajectory);
        let tolerance = TOLERANCE * largest;
        let same = diff <= tolerance; // false for NaN too
        let learned = run.loss < 1e-3;
        let verdict_of = |ok: bool| if ok { "PASS" } else { "FAIL" };
        println!(
            "replicas: max |difference| between ranks = {replicas_differ:.1e}: {}",
            verdict_of(replicas_differ == 0.0)
        );
        println!(
            "max |distributed - single-process| over all {} steps = {diff:.3e} (tolerance {tolerance:.1e}): {}",
            config.steps,
            verdict_of(same)
        );
        println!(
            "final loss {:.2e} (single process {:.2e}): {}",
            run.loss,
            single.loss,
            verdict_of(learned)
        );
        let pass = same && learned && replicas_differ == 0.0;
        println!("{}", verdict_of(pass));
        verdict[0] = i32::from(!pass);
    }
    world.broadcast(&mut verdict, 0)?;
    Ok(verdict[0] == 0)
}

fn main() -> ExitCode {
    let config = match parse_args() {
        Ok(c) => c,
        Err(why) => {
            eprintln!("train_dp: {why}");
            return ExitCode::from(2);
        }
    };
    match run(&config) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("train_dp: {e}");
            ExitCode::from(2)
        }
    }
}
