"""A Dask cluster on a batch scheduler (Slurm, PBS) for routecli's task lists, via dask-jobqueue.

    pip install 'routecli[cluster]'
    python benchmarks/jobqueue_cluster.py slurm --jobs 20 --memory 2GB --walltime 12:00:00 \\
        --queue normal --port 8786 &
    routecli bench --set cvrplib-x -m hgs --protocol pyvrp --scheduler tcp://$(hostname):8786 \\
        -o runs/x-hgs-pyvrp

Starts a Dask scheduler in this process (on the login node, port ``--port``) and asks the
batch system for ``--jobs`` jobs, each one Dask worker of one core and one thread (the
protocol's one core per run); prints the scheduler's address and keeps it running until
stopped (Ctrl-C, or kill: the jobs are cancelled with it). Any routecli command with
``--scheduler ADDRESS`` then runs its tasks there and writes its rows where it runs. Workers
read instance files and write run folders at the same paths: use a shared file system.
"""

from __future__ import annotations

import argparse
import time

SYSTEMS = {"slurm": "SLURMCluster", "pbs": "PBSCluster", "sge": "SGECluster",
           "lsf": "LSFCluster"}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("system", choices=SYSTEMS, help="the batch system")
    parser.add_argument("--jobs", type=int, default=10, help="batch jobs, one worker each")
    parser.add_argument("--memory", default="2GB", help="memory per job")
    parser.add_argument("--walltime", default="04:00:00", help="wall time per job")
    parser.add_argument("--queue", default=None, help="partition or queue")
    parser.add_argument("--account", default=None, help="account or project to charge")
    parser.add_argument("--port", type=int, default=8786, help="the scheduler's port")
    args = parser.parse_args(argv)
    try:
        import dask_jobqueue
    except ImportError:
        raise SystemExit("error: dask-jobqueue is not installed: pip install "
                         "'routecli[cluster]'") from None
    cluster_type = getattr(dask_jobqueue, SYSTEMS[args.system])
    cluster = cluster_type(cores=1, processes=1, memory=args.memory, walltime=args.walltime,
                           queue=args.queue, account=args.account,
                           scheduler_options={"port": args.port})
    cluster.scale(jobs=args.jobs)
    print(f"Dask scheduler at {cluster.scheduler_address} ({args.jobs} {args.system} jobs of "
          "one core asked for); pass it as --scheduler; Ctrl-C stops it", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        cluster.close()


if __name__ == "__main__":
    main()
