/**
 * What one hop between two processes costs on this machine: 1 KB ping-pong over loopback TCP
 * between the bench and an echo child. A request through Tollgate makes two more such hops
 * than one sent directly to the upstream (client → gateway → upstream → gateway → client), so
 * this is part of the latency Tollgate adds that no code in it can remove. On a VM whose idle
 * vCPUs halt without polling, each wake-up of a process on the other vCPU is an interrupt
 * through the hypervisor: measured here, about 50 µs and 25–30 µs of kernel CPU per hop.
 */
import { fork } from 'node:child_process';
import { connect, createServer } from 'node:net';

const MESSAGE_BYTES = 1024;

export interface HopCost {
  /** Mean round trip (two hops), µs. */
  roundTripUs: number;
  /** The sending side's CPU (user + system) per round trip, µs. */
  cpuUsPerRoundTrip: number;
}

export function measureHop(roundTrips = 10_000): Promise<HopCost> {
  const child = fork(__filename, ['echo'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  return new Promise<HopCost>((resolve, reject) => {
    child.once('error', reject);
    child.once('message', (port) => {
      const socket = connect(port as number, '127.0.0.1', () => {
        socket.setNoDelay(true);
        const message = Buffer.alloc(MESSAGE_BYTES, 0x61);
        let done = 0;
        let pending = MESSAGE_BYTES;
        const started = process.hrtime.bigint();
        const cpu = process.cpuUsage();
        socket.on('data', (chunk) => {
          pending -= chunk.length;
          if (pending > 0) return;
          pending += MESSAGE_BYTES;
          if (++done < roundTrips) return void socket.write(message);
          const used = process.cpuUsage(cpu);
          resolve({
            roundTripUs: Number(process.hrtime.bigint() - started) / 1e3 / roundTrips,
            cpuUsPerRoundTrip: (used.user + used.system) / roundTrips,
          });
          socket.destroy();
          child.kill();
        });
        socket.write(message);
      });
      socket.once('error', reject);
    });
  });
}

if (process.argv[2] === 'echo') {
  const server = createServer((socket) => {
    socket.setNoDelay(true);
    socket.on('data', (chunk) => socket.write(chunk));
  });
  server.listen(0, '127.0.0.1', () => process.send?.((server.address() as { port: number }).port));
  // Gone with the bench, however it ended.
  process.on('disconnect', () => process.exit(0));
}
