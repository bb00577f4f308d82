// Standalone entry point: `npx tsx simulator/main.ts`. Settings come from SIM_* variables so the
// dev launcher can start it next to the API with matching credentials.
import { createSimulatorLogger } from './log.js';
import { createSimulator } from './app.js';
import { optionsFromEnv } from './options.js';

const log = createSimulatorLogger();

async function main(): Promise<void> {
  const port = Number(process.env.SIM_PORT || '4010');
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`SIM_PORT must be a TCP port, got "${process.env.SIM_PORT}"`);
  const sim = createSimulator({ ...optionsFromEnv(), logger: log });
  const running = await sim.listen(port);
  log.info(
    {
      sms: `${running.url}/sms`,
      whatsapp: `${running.url}/whatsapp/v21.0`,
      payments: `${running.url}/daraja`,
      controls: `${running.url}/_sim`,
      receiptDelayMs: sim.state.config.receiptDelayMs,
      smsInboundUrl: sim.state.config.smsInboundUrl,
      waWebhookUrl: sim.state.config.waWebhookUrl,
    },
    'simulator ready',
  );

  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'simulator stopping');
    running.close().then(
      () => process.exit(0),
      (err: unknown) => {
        log.error({ err }, 'simulator failed to stop cleanly');
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
}

main().catch((err: unknown) => {
  log.fatal({ err }, 'simulator failed to start');
  process.exit(1);
});
