import type { Attributes, Span, SpanKind as SpanKindType } from '@opentelemetry/api';
import type { SpanAttributes, TraceSpan, Tracer } from '../domain/shared/telemetry';

/**
 * The Tracer port on OpenTelemetry, exporting OTLP/HTTP (JSON) to the configured collector.
 * The SDK is loaded only here, and this is only called when an endpoint is configured: with
 * tracing off nothing of OpenTelemetry is even required. No global provider is registered
 * (several Tollgates may share a process, as in tests); spans are parented explicitly.
 */

export interface TracingOptions {
  /** Full URL of the OTLP/HTTP traces endpoint (…/v1/traces). */
  tracesUrl: string;
  serviceName: string;
  serviceVersion: string;
}

type Api = typeof import('@opentelemetry/api');
type OtelTracer = ReturnType<import('@opentelemetry/sdk-trace-base').BasicTracerProvider['getTracer']>;

/** Drops unset attributes (OpenTelemetry warns about them otherwise). */
function defined(attributes: SpanAttributes): Attributes {
  const out: Attributes = {};
  for (const key in attributes) {
    const value = attributes[key];
    if (value !== undefined) out[key] = value;
  }
  return out;
}

class OtelSpan implements TraceSpan {
  constructor(
    private readonly api: Api,
    private readonly tracer: OtelTracer,
    private readonly span: Span,
  ) {}

  setName(name: string): void {
    this.span.updateName(name);
  }

  setAttributes(attributes: SpanAttributes): void {
    this.span.setAttributes(defined(attributes));
  }

  fail(code: string, message: string): void {
    this.span.setAttribute('error.type', code);
    this.span.setStatus({ code: this.api.SpanStatusCode.ERROR, message });
  }

  end(): void {
    this.span.end();
  }

  child(name: string, attributes: SpanAttributes): TraceSpan {
    const parent = this.api.trace.setSpan(this.api.ROOT_CONTEXT, this.span);
    const span = this.tracer.startSpan(name, { kind: this.api.SpanKind.CLIENT as SpanKindType, attributes: defined(attributes) }, parent);
    return new OtelSpan(this.api, this.tracer, span);
  }
}

export async function startTracing(options: TracingOptions): Promise<Tracer> {
  const api = await import('@opentelemetry/api');
  const { BasicTracerProvider, BatchSpanProcessor } = await import('@opentelemetry/sdk-trace-base');
  const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-http');
  const { resourceFromAttributes } = await import('@opentelemetry/resources');
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': options.serviceName, 'service.version': options.serviceVersion }),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: options.tracesUrl }))],
  });
  const tracer = provider.getTracer('tollgate', options.serviceVersion);
  return {
    startRequest: (name, attributes) =>
      new OtelSpan(api, tracer, tracer.startSpan(name, { kind: api.SpanKind.SERVER, attributes: defined(attributes) })),
    // Exports what is still buffered: a stopping gateway loses no spans.
    close: () => provider.shutdown(),
  };
}
