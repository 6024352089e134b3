"""Generator of soft-IOC databases for the simulated EPICS IOC.

``build_database(spec)`` returns the ``.db`` text and the PV names it defines:

- ``N`` counters ``<P>CNT:00000`` …: ``calcout`` records adding 1 to themselves at
  rate ``R`` (the peers' benchmark shape: a client sees a lost update as a skipped
  count);
- unless ``extras`` is off, one of each other kind: a sine with alarm limits it
  crosses (``<P>SINE``: MINOR beyond ±5, MAJOR beyond ±8), noise, a random walk,
  a rolling 1k-point waveform of the sine, a 100k-point writable waveform, an enum
  state cycling through three labels (``mbbi``) and a writable enum (``mbbo``),
  a string and a writable string, a writable setpoint with units, precision and
  drive limits, a read-only setpoint (access security) for write-refusal tests,
  and a number and a string no one processes (``<P>UNSET``, ``<P>UNSET:MSG``:
  undefined, time stamp 0, as a record before its first scan after an IOC start;
  left out of the names returned, which the demo shows: an undefined value is an
  alarm).
"""

from __future__ import annotations

from dataclasses import dataclass

#: Access security file that makes records with ``ASG("RO")`` read-only.
ACCESS_SECURITY = """\
ASG(DEFAULT) {
    RULE(1, READ)
    RULE(1, WRITE)
}
ASG(RO) {
    RULE(1, READ)
}
"""

#: Rates (Hz) the base ``menuScan`` offers, and their SCAN field.
SCAN_BY_RATE = {
    10.0: ".1 second", 5.0: ".2 second", 2.0: ".5 second", 1.0: "1 second",
    0.5: "2 second", 0.2: "5 second", 0.1: "10 second",
}  # fmt: skip

WAVEFORM_BIG = 100_000
WAVEFORM_SMALL = 1_000


@dataclass(frozen=True)
class SimSpec:
    """What the simulated IOC holds."""

    prefix: str = "SIM:"
    records: int = 100  # counters
    rate: float = 10.0  # Hz, per counter and for the moving extras
    extras: bool = True

    @property
    def scan(self) -> str:
        """The SCAN field for ``rate`` (one of the base ``menuScan`` periods)."""
        scan = SCAN_BY_RATE.get(self.rate)
        if scan is None:
            rates = ", ".join(f"{r:g}" for r in SCAN_BY_RATE)
            raise ValueError(f"rate {self.rate:g} Hz: a soft IOC scans at {rates} Hz")
        return scan


def counter_names(spec: SimSpec) -> list[str]:
    """The counter PV names, in order."""
    width = max(5, len(str(spec.records - 1)))
    return [f"{spec.prefix}CNT:{i:0{width}d}" for i in range(spec.records)]


def extra_names(spec: SimSpec) -> list[str]:
    """The PV names of the other kinds (empty without extras)."""
    if not spec.extras:
        return []
    p = spec.prefix
    return [
        f"{p}SINE", f"{p}NOISE", f"{p}WALK", f"{p}WF1K", f"{p}WF100K",
        f"{p}STATE", f"{p}MODE", f"{p}MSG", f"{p}MSG:SP", f"{p}SP", f"{p}SP:RO",
    ]  # fmt: skip


def build_database(spec: SimSpec) -> tuple[str, list[str]]:
    """The database text and the PV names it defines (counters first), but for
    the records no one processes."""
    if spec.records < 0:
        raise ValueError("records must be >= 0")
    parts = [_counter(name, spec.scan) for name in counter_names(spec)]
    if spec.extras:
        parts.append(_extras(spec))
    return "\n".join(parts), counter_names(spec) + extra_names(spec)


def _counter(name: str, scan: str) -> str:
    return (
        f'record(calcout, "{name}") {{\n'
        f'  field(SCAN, "{scan}")\n'
        f'  field(INPA, "{name} NPP")\n'
        '  field(CALC, "A+1")\n'
        "}\n"
    )


def _extras(spec: SimSpec) -> str:
    p, scan = spec.prefix, spec.scan
    return f"""
record(calc, "{p}SINE") {{
  field(SCAN, "{scan}")
  field(INPA, "{p}SINE:PHASE NPP")
  field(CALC, "10*SIN(A)")
  field(EGU, "mm")
  field(PREC, "3")
  field(HOPR, "10")
  field(LOPR, "-10")
  field(HIHI, "8")
  field(HIGH, "5")
  field(LOW, "-5")
  field(LOLO, "-8")
  field(HHSV, "MAJOR")
  field(HSV, "MINOR")
  field(LSV, "MINOR")
  field(LLSV, "MAJOR")
  field(FLNK, "{p}SINE:PHASE")
}}
record(calc, "{p}SINE:PHASE") {{
  field(INPA, "{p}SINE:PHASE NPP")
  field(CALC, "A+0.05")
}}
record(calc, "{p}NOISE") {{
  field(SCAN, "{scan}")
  field(CALC, "RNDM*2-1")
  field(EGU, "V")
  field(PREC, "4")
  field(HOPR, "1")
  field(LOPR, "-1")
}}
record(calc, "{p}WALK") {{
  field(SCAN, "{scan}")
  field(INPA, "{p}WALK NPP")
  field(CALC, "A+RNDM-0.5")
  field(EGU, "um")
  field(PREC, "2")
}}
record(compress, "{p}WF1K") {{
  field(INP, "{p}SINE CP")
  field(ALG, "Circular Buffer")
  field(NSAM, "{WAVEFORM_SMALL}")
  field(EGU, "mm")
  field(PREC, "3")
  field(HOPR, "10")
  field(LOPR, "-10")
}}
record(waveform, "{p}WF100K") {{
  field(FTVL, "DOUBLE")
  field(NELM, "{WAVEFORM_BIG}")
  field(EGU, "counts")
}}
record(calc, "{p}STATE:IDX") {{
  field(SCAN, "1 second")
  field(INPA, "{p}STATE:IDX NPP")
  field(CALC, "(A+1)%3")
  field(FLNK, "{p}STATE")
}}
record(mbbi, "{p}STATE") {{
  field(INP, "{p}STATE:IDX NPP")
  field(ZRST, "Idle")
  field(ONST, "Running")
  field(TWST, "Fault")
  field(TWSV, "MAJOR")
}}
record(mbbo, "{p}MODE") {{
  field(ZRST, "Off")
  field(ONST, "On")
  field(TWST, "Standby")
  field(VAL, "0")
  field(PINI, "YES")
}}
record(stringin, "{p}MSG") {{
  field(VAL, "hello from the simulated IOC")
  field(PINI, "YES")
}}
record(stringout, "{p}MSG:SP") {{
  field(VAL, "")
}}
record(ao, "{p}SP") {{
  field(EGU, "A")
  field(PREC, "3")
  field(DRVH, "100")
  field(DRVL, "0")
  field(HOPR, "100")
  field(LOPR, "0")
  field(HIGH, "80")
  field(HSV, "MINOR")
  field(HIHI, "90")
  field(HHSV, "MAJOR")
  field(LOW, "5")
  field(LSV, "MINOR")
  field(LOLO, "2")
  field(LLSV, "MAJOR")
  field(VAL, "50")
  field(PINI, "YES")
}}
record(ao, "{p}SP:RO") {{
  field(EGU, "A")
  field(VAL, "1")
  field(PINI, "YES")
  field(ASG, "RO")
}}
record(ai, "{p}UNSET") {{
  field(EGU, "V")
}}
record(stringin, "{p}UNSET:MSG") {{
}}
"""
