#!/usr/bin/python3
"""Runs the Patroni Debian ships (3.0.2 in bookworm) with one upstream fix.

Patroni decides whether a former primary must be rewound by comparing its
timeline with the new primary's. Before 3.1.1 (patroni/patroni#2863, "Don't
rely on pg_stat_wal_receiver when deciding on pg_rewind") a running member's
timeline was taken from its WAL receiver first: a crashed primary restarted
as a replica by Patroni ("Demoting self (immediate)") whose WAL receiver has
already connected to the new primary reports the new timeline while its
replay still stands on the old one, past the fork. Patroni then sees no
divergence, skips pg_rewind, and the member waits for WAL forever ("invalid
resource manager ID ... waiting for WAL to become available"): the cluster
runs without a synchronous standby until an operator reinitializes it. The
nemesis (e2e TestNemesis: a machine kill, then the promoted primary's
postmaster killed) found it.

The fix is upstream's: the timeline of a running member is the one
IDENTIFY_SYSTEM reports over a local replication connection, the timeline it
replays. It is applied only where the installed Patroni still reads the WAL
receiver's; a Patroni that does not is run as it is.

Usage: patroni_run.py CONFIG (what `patroni CONFIG` takes). --check applies
the fix as a start would and asks the rewind check for the timeline of a
running member whose WAL receiver is one timeline ahead of its replay: it
exits 0 when the answer is the replayed timeline, 1 when it is not.
"""
import inspect
import sys

from patroni.postgresql import rewind


def _get_local_timeline_lsn(self):
    if self._postgresql.is_running():
        in_recovery = True
        timeline = self._postgresql.get_replica_timeline()
        lsn = self._postgresql.replayed_location()
    else:
        in_recovery, timeline, lsn = self._get_local_timeline_lsn_from_controldata()
    rewind.logger.info('Local timeline=%s lsn=%s', timeline,
                       rewind.format_lsn(lsn) if isinstance(lsn, int) else lsn)
    return in_recovery, timeline, lsn


def apply():
    """Applies the fix where the installed Patroni needs it; says which."""
    if 'received_timeline()' in inspect.getsource(rewind.Rewind._get_local_timeline_lsn):
        rewind.Rewind._get_local_timeline_lsn = _get_local_timeline_lsn
        return 'the installed Patroni reads the WAL receiver\'s timeline: fixed here'
    return 'the installed Patroni reads the replayed timeline: run as it is'


class _RunningMember:
    """A member restarted after a crash: its WAL receiver already streams
    timeline 3 while its replay stands on timeline 2."""

    def is_running(self):
        return True

    def received_timeline(self):
        return 3

    def get_replica_timeline(self):
        return 2

    def replayed_location(self):
        return 0x8A698E8


def check():
    print(apply())
    r = rewind.Rewind.__new__(rewind.Rewind)
    r._postgresql = _RunningMember()
    _, timeline, _ = r._get_local_timeline_lsn()
    print('a running member\'s timeline, its WAL receiver on 3 and its replay on 2: %s' % timeline)
    return 0 if timeline == 2 else 1


def main():
    if sys.argv[1:] == ['--check']:
        return check()
    apply()
    from patroni.__main__ import main as patroni_main
    sys.argv[0] = 'patroni'
    return patroni_main()


if __name__ == '__main__':
    sys.exit(main())
