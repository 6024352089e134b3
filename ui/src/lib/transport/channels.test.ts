import { describe, expect, it } from 'vitest';
import { normaliseUri, shortName } from './channels';

describe('channel URIs (same rules as synoptic_schemas.channels)', () => {
  it('keeps EPICS names verbatim', () => {
    expect(normaliseUri('ca://SIM:Sine')).toBe('ca://SIM:Sine');
    expect(normaliseUri(' pva://A:B ')).toBe('pva://A:B');
  });
  it('lower-cases Tango names, adds the default port, drops #dbase=no', () => {
    expect(normaliseUri('tango://Host/Sim/Test/1/Double')).toBe('tango://host:10000/sim/test/1/double');
    expect(normaliseUri('tango://h:20000/a/b/c/d#dbase=no')).toBe('tango://h:20000/a/b/c/d');
  });
  it('refuses what is not a channel', () => {
    expect(normaliseUri('SIM:SINE')).toBeNull();
    expect(normaliseUri('xx://A')).toBeNull();
    expect(normaliseUri('tango://h:1/a/b/c')).toBeNull();
  });
  it('shortens names for captions', () => {
    expect(shortName('tango://h:10000/sim/test/1/double')).toBe('sim/test/1/double');
    expect(shortName('ca://SIM:SINE')).toBe('SIM:SINE');
  });
});
