/**
 * The order filter of a list (Deliveries, Events): a field its form reads when submitted, keyed by the order the
 * address holds, so that back and forward put the field back to what the list shows.
 */
export function OrderField({ value }: { value: string }) {
  return (
    <div className="field">
      <label htmlFor="orderId">Order</label>
      <input
        id="orderId"
        name="orderId"
        key={value}
        type="search"
        autoComplete="off"
        spellCheck={false}
        defaultValue={value}
        placeholder="an order's id"
      />
    </div>
  );
}

/** The order a filter form was submitted with ("" for none). */
export const submittedOrder = (form: HTMLFormElement) => String(new FormData(form).get('orderId') ?? '').trim();
