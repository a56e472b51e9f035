"""The report of `peer_bench.py --scale`: a markdown table of its runs (one JSON result each, as
run_operator and run_bare return them) and the ratios the scale goals name, ours against the bare
client and the peer on the 7-pod jobs."""


def text(rows, label):
    """The table of rows, then the ratios of the runs whose "scale" is label."""
    out = ["| run | contender | jobs | pods exist s | all succeeded s | PS teardown p50 / p99 ms | CPU s (ms per "
           "job) | API server + etcd CPU ms per job | peak RSS MB (per 1,000 jobs) | writes per job | status writes "
           "per job | events per job |",
           "|---" * 12 + "|"]
    for r in rows:
        teardown = "-" if r.get("ps_teardown_ms_p99") is None else \
            f"{r['ps_teardown_ms_p50']:g} / {r['ps_teardown_ms_p99']:g}"
        rss = f"{r['peak_rss_mb']:g} ({r.get('peak_rss_mb_per_1000_jobs', '-')})" if "peak_rss_mb" in r else "-"
        out.append(f"| {r['scale']} | {r['contender']} | {r['jobs']} | {r['all_pods_exist_s']:g} | "
                   f"{r.get('all_succeeded_s', '-')} | {teardown} | {r['cpu_s']:g} ({r.get('cpu_ms_per_job', '-')}) | "
                   f"{r.get('apiserver_cpu_ms_per_job', '-')} | {rss} | {r.get('writes_per_job', '-')} | "
                   f"{r.get('status_writes_per_job', '-')} | {r.get('events_per_job', '-')} |")
    by = {(r["scale"], r["contender"]): r for r in rows}
    mine, bare, peer = by.get((label, "disttrain")), by.get((label, "bare-same")), by.get((label, "peer-matched"))
    if mine and bare:
        out.append(f"- pods exist {mine['all_pods_exist_s'] / bare['all_pods_exist_s']:.2f}x the bare client's time; "
                   f"operator CPU until every pod exists {mine['cpu_creating_s'] / bare['cpu_s']:.2f}x the bare "
                   "client's own CPU")
    if mine and peer:
        out.append(f"- per job against the peer ({peer['jobs']} jobs): writes "
                   f"{mine['writes_per_job'] / peer['writes_per_job']:.2f}x, "
                   f"CPU {mine['cpu_ms_per_job'] / peer['cpu_ms_per_job']:.2f}x")
    return "\n".join(out)
