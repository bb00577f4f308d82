// The simulator's own logger (it stands apart from the application and shares no code with it).
import { pino, type Logger } from 'pino';

export type { Logger };

export function createSimulatorLogger(level = process.env.LOG_LEVEL ?? 'info'): Logger {
  return pino({ name: 'simulator', level, base: { svc: 'simulator' }, timestamp: pino.stdTimeFunctions.isoTime });
}
