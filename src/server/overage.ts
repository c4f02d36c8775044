import type { Logger } from 'pino';
import type { Overage } from '../domain/billing/hold-requests';
import type { Catalog } from '../domain/catalog/types';
import type { PrometheusMetrics } from '../infra/metrics';

/**
 * A vendor reported usage costing more than the request's hold: charged up to the hold, the
 * excess recorded on the usage record as overage (docs/billing.md, Overage). Rare, and worth a look.
 */
export function reportOverage(catalog: Catalog, metrics: PrometheusMetrics | null, log: Logger): (o: Overage) => void {
  return (o) => {
    const vendor = catalog.byId.get(o.model)?.vendor ?? '';
    metrics?.overage(vendor, o.model, o.overageMicro);
    log.warn(
      {
        request_id: o.requestId,
        account_id: o.accountId,
        key_id: o.keyId,
        model: o.model,
        vendor,
        hold_micro: String(o.holdMicro),
        cost_micro: String(o.costMicro),
        charged_micro: String(o.chargedMicro),
        overage_micro: String(o.overageMicro),
      },
      'vendor usage cost more than the hold: charged the hold, the excess recorded as overage',
    );
  };
}
