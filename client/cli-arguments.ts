// The admin CLI's parsers of argument and option values (client/cli.ts): anything else is refused as a usage error.
import { InvalidArgumentError } from 'commander';

export const positiveInt = (value: string) => {
  if (!/^\d+$/.test(value) || Number(value) < 1) throw new InvalidArgumentError('must be a whole number of at least 1');
  return Number(value);
};
export const seconds = (value: string) => {
  if (!/^\d+$/.test(value)) throw new InvalidArgumentError('must be a whole number of seconds');
  return Number(value);
};
export const onOff = (value: string) => {
  if (value !== 'on' && value !== 'off') throw new InvalidArgumentError('must be on or off');
  return value === 'on';
};
