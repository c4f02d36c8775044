import { useState, type FormEvent } from 'react';
import { customPeriodProblem, lastDays, type Period, type PeriodChoice } from '../period';
import { ErrorList } from './ErrorList';

const CHOICES: { value: PeriodChoice; label: string }[] = [
  { value: '7', label: 'Last 7 days' },
  { value: '30', label: 'Last 30 days' },
  { value: '90', label: 'Last 90 days' },
  { value: 'custom', label: 'Custom' },
];

/** The period of whole UTC days a page shows: 7, 30 or 90 days ending today, or chosen days. */
export function PeriodPicker({
  choice,
  period,
  onChange,
}: {
  choice: PeriodChoice;
  period: Period;
  onChange: (choice: PeriodChoice, period: Period) => void;
}) {
  const [from, setFrom] = useState(period.from);
  const [to, setTo] = useState(period.to);
  const [problem, setProblem] = useState<string | null>(null);
  const choose = (value: PeriodChoice) => {
    setProblem(null);
    if (value === 'custom') onChange('custom', period);
    else onChange(value, lastDays(Number(value)));
  };
  const apply = (event: FormEvent) => {
    event.preventDefault();
    const wanted = { from, to };
    const found = customPeriodProblem(wanted);
    setProblem(found);
    if (!found) onChange('custom', wanted);
  };
  return (
    <div className="period">
      <fieldset className="inline">
        <legend>Period (UTC days)</legend>
        {CHOICES.map((c) => (
          <label key={c.value} className="choice">
            <input type="radio" name="period" value={c.value} checked={choice === c.value} onChange={() => choose(c.value)} /> {c.label}
          </label>
        ))}
      </fieldset>
      {choice === 'custom' && (
        <form className="inline" onSubmit={apply} aria-label="Custom period">
          <label>
            First day
            <input type="date" value={from} onChange={(e) => setFrom(e.target.value)} required />
          </label>
          <label>
            Last day
            <input type="date" value={to} onChange={(e) => setTo(e.target.value)} required />
          </label>
          <button type="submit">Show these days</button>
          <ErrorList messages={problem ? [problem] : []} />
        </form>
      )}
    </div>
  );
}
