import { useState } from 'react';
import { useQuery } from 'urql';
import { ModelsDocument, type ModelModality } from '../generated/graphql';
import { formatMicro } from '../money';
import { ErrorList } from '../parts/ErrorList';
import { Scroll } from '../parts/Scroll';

const MODALITIES: { value: ModelModality; label: string }[] = [
  { value: 'text' as ModelModality, label: 'Text' },
  { value: 'image' as ModelModality, label: 'Images' },
  { value: 'video' as ModelModality, label: 'Video' },
];
const modalityInWords = (m: string) => ({ text: 'Text', image: 'Image', video: 'Video' })[m] ?? m;

/** A price, or a dash where the price does not apply to the model's kind. */
const price = (micro: string | null | undefined) => (micro ? formatMicro(micro) : '—');

/**
 * Every model the account can call with its prices, as the API bills them: token prices per
 * million tokens, images per image, video per second. The list is short, so search is local.
 */
export function ModelsPage() {
  const [search, setSearch] = useState('');
  const [modality, setModality] = useState('');
  const [{ data, error, fetching }] = useQuery({ query: ModelsDocument });
  const words = search.trim().toLowerCase().split(/\s+/).filter(Boolean);
  const rows = (data?.models ?? []).filter(
    (m) => (!modality || m.modality === modality) && words.every((w) => m.id.toLowerCase().includes(w)),
  );
  return (
    <section aria-labelledby="models-title">
      <h2 id="models-title">Models you can call</h2>
      <p className="muted">
        Send the id as <code>model</code>. Token prices are in dollars per million tokens; images are priced per image and video per second.
        A cache write is billed once when a prompt prefix is stored for 5 minutes or 1 hour; later reads of it are billed at the cached
        input price.
      </p>
      <form className="inline" role="search" aria-label="Find a model" onSubmit={(e) => e.preventDefault()}>
        <div className="field">
          <label htmlFor="models-search">Search</label>
          <input id="models-search" type="search" value={search} placeholder="e.g. gpt-4o" onChange={(e) => setSearch(e.target.value)} />
        </div>
        <div className="field">
          <label htmlFor="models-modality">Kind</label>
          <select id="models-modality" value={modality} onChange={(e) => setModality(e.target.value)}>
            <option value="">every kind</option>
            {MODALITIES.map((m) => (
              <option key={m.value} value={m.value}>
                {m.label.toLowerCase()}
              </option>
            ))}
          </select>
        </div>
      </form>
      <ErrorList error={error} />
      {!data && fetching && <p role="status">Loading the models…</p>}
      {data && (
        <p role="status" data-testid="models-count">
          {rows.length === 1 ? '1 model' : `${rows.length} models`}
          {rows.length !== data.models.length ? ` of ${data.models.length}` : ''}
        </p>
      )}
      {rows.length > 0 && (
        <Scroll label="Models and prices, scrollable">
          <table aria-label="Models and prices">
            <thead>
              <tr>
                <th scope="col">Model</th>
                <th scope="col">Kind</th>
                <th scope="col">Input / 1M</th>
                <th scope="col">Cached input / 1M</th>
                <th scope="col">Cache write 5 min / 1M</th>
                <th scope="col">Cache write 1 h / 1M</th>
                <th scope="col">Output / 1M</th>
                <th scope="col">Per image</th>
                <th scope="col">Per video second</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((m) => (
                <tr key={m.id}>
                  <th scope="row">
                    <code>{m.id}</code>
                  </th>
                  <td>{modalityInWords(m.modality)}</td>
                  <td>{price(m.inputPerMTokMicro)}</td>
                  <td>{price(m.cachedInputPerMTokMicro)}</td>
                  <td>{price(m.cacheWrite5mPerMTokMicro)}</td>
                  <td>{price(m.cacheWrite1hPerMTokMicro)}</td>
                  <td>{price(m.outputPerMTokMicro)}</td>
                  <td>{price(m.perImageMicro)}</td>
                  <td>{price(m.perVideoSecondMicro)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </Scroll>
      )}
      {data && rows.length === 0 && <p>No model matches.</p>}
    </section>
  );
}
