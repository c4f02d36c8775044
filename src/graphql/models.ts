import { Ctx, Field, ObjectType, Query, Resolver, registerEnumType } from 'type-graphql';
import { usableImageModels, usableTextModels, usableVideoModels } from '../domain/catalog/access';
import type { Catalog, ModelAccess } from '../domain/catalog/types';
import { requireSession, type GraphqlContext } from './context';

export enum ModelModalityEnum {
  text = 'text',
  image = 'image',
  video = 'video',
}
registerEnumType(ModelModalityEnum, { name: 'ModelModality' });

const MTOK = 'micro-dollars per million tokens, a decimal string';

@ObjectType('ModelPrice', {
  description:
    'A catalog model the account can call, with its prices. Prices are decimal strings of micro-dollars (1 dollar = 1,000,000); token prices are per million tokens. They are the figures GET /v1/models shows a prepaid key of the account (there per token or per unit, in dollars).',
})
export class ModelPriceType {
  @Field({ description: 'The id to send as `model`' }) id!: string;
  @Field(() => ModelModalityEnum) modality!: ModelModalityEnum;
  @Field({ description: 'Who publishes the model (owned_by in /v1/models)' }) ownedBy!: string;
  @Field(() => String, { nullable: true, description: `Input, ${MTOK}; text models only` }) inputPerMTokMicro!: string | null;
  @Field(() => String, { nullable: true, description: `Cached input, ${MTOK}; text models only` }) cachedInputPerMTokMicro!: string | null;
  @Field(() => String, { nullable: true, description: `Cache writes kept 5 minutes, ${MTOK}; text models only` })
  cacheWrite5mPerMTokMicro!: string | null;
  @Field(() => String, { nullable: true, description: `Cache writes kept 1 hour, ${MTOK}; text models only` }) cacheWrite1hPerMTokMicro!:
    string | null;
  @Field(() => String, { nullable: true, description: `Output, ${MTOK}; text models only` }) outputPerMTokMicro!: string | null;
  @Field(() => String, { nullable: true, description: 'Per image, micro-dollars; image models only' }) perImageMicro!: string | null;
  @Field(() => String, { nullable: true, description: 'Per second of video, micro-dollars; video models only' }) perVideoSecondMicro!:
    string | null;
}

const NO_PRICES = {
  inputPerMTokMicro: null,
  cachedInputPerMTokMicro: null,
  cacheWrite5mPerMTokMicro: null,
  cacheWrite1hPerMTokMicro: null,
  outputPerMTokMicro: null,
  perImageMicro: null,
  perVideoSecondMicro: null,
};

/**
 * The account's models through the same usability rule as /v1/models (domain/catalog/access.ts)
 * for a prepaid key, the kind the dashboard issues; prices come straight from the catalog entry.
 */
export function accountModels(catalog: Catalog, configuredVendors: ReadonlySet<string>): ModelPriceType[] {
  const access: ModelAccess = { keyKind: 'prepaid', configuredVendors };
  const text = usableTextModels(catalog, access).map((model) => ({
    ...NO_PRICES,
    id: model.id,
    modality: ModelModalityEnum.text,
    ownedBy: model.namespace,
    inputPerMTokMicro: String(model.pricing!.inputPerMTokMicro),
    cachedInputPerMTokMicro: String(model.pricing!.cachedInputPerMTokMicro),
    cacheWrite5mPerMTokMicro: String(model.pricing!.cacheWrite5mPerMTokMicro),
    cacheWrite1hPerMTokMicro: String(model.pricing!.cacheWrite1hPerMTokMicro),
    outputPerMTokMicro: String(model.pricing!.outputPerMTokMicro),
  }));
  const images = usableImageModels(catalog, access).map((model) => ({
    ...NO_PRICES,
    id: model.id,
    modality: ModelModalityEnum.image,
    ownedBy: model.namespace,
    perImageMicro: String(model.pricing!.perImageMicro),
  }));
  const videos = usableVideoModels(catalog, access).map((model) => ({
    ...NO_PRICES,
    id: model.id,
    modality: ModelModalityEnum.video,
    ownedBy: model.namespace,
    perVideoSecondMicro: String(model.pricing!.perSecondMicro),
  }));
  return [...text, ...images, ...videos];
}

@Resolver()
export class ModelResolver {
  @Query(() => [ModelPriceType], { description: 'Models the signed-in account can call, text then images then videos, with their prices' })
  models(@Ctx() ctx: GraphqlContext): ModelPriceType[] {
    requireSession(ctx);
    return accountModels(ctx.services.catalog, ctx.services.configuredVendors);
  }
}
