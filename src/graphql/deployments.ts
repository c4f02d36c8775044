import { Ctx, Field, Float, Int, ObjectType, Query, Resolver } from 'type-graphql';
import { requireOperator, type GraphqlContext } from './context';

@ObjectType('Deployment', {
  description:
    'One upstream of a routed model (docs/routing.md) and its circuit breaker on this instance (shared by all instances with Redis)',
})
export class DeploymentType {
  @Field() model!: string;
  @Field({ description: "The model's kind: text or image" }) kind!: string;
  @Field({ description: 'The deployment name: its vendor (credentials) name' }) deployment!: string;
  @Field() vendor!: string;
  @Field({ description: 'openai, anthropic, gemini, openai-compatible, azure-openai, bedrock or vertex' }) protocol!: string;
  @Field({ description: 'The model, Azure deployment or Bedrock model id sent upstream' }) vendorModelId!: string;
  @Field(() => Int) priority!: number;
  @Field(() => Int) weight!: number;
  @Field({ description: 'Its credentials are set' }) configured!: boolean;
  @Field({ description: 'closed (takes traffic), half-open (a probe may go) or cooled (no traffic)' }) state!: string;
  @Field(() => Int) consecutiveFailures!: number;
  @Field(() => Float, { nullable: true, description: 'When the cooldown ends, epoch milliseconds' }) cooledUntilMs!: number | null;
  @Field(() => String, { nullable: true }) lastError!: string | null;
}

@Resolver()
export class DeploymentResolver {
  @Query(() => [DeploymentType], { description: 'Operator: every deployment of the routed models (text, then image), with its health' })
  deployments(@Ctx() ctx: GraphqlContext): DeploymentType[] {
    requireOperator(ctx);
    return ctx.services.deployments().map(({ cooledUntil, ...listing }) => ({ ...listing, cooledUntilMs: cooledUntil }));
  }
}
