/** What every widget component receives. */
import type { ChannelState } from '../transport/channel.svelte';
import type { WidgetSpec } from '../screen';

export interface WidgetProps {
  spec: WidgetSpec;
  /** one state per URI of `spec.channels`, in the same order */
  channels: ChannelState[];
}

/** The widget's options, typed by the caller. */
export function optionsOf<T>(spec: WidgetSpec): Partial<T> {
  return (spec.options ?? {}) as Partial<T>;
}
