/** The CDK app of `npx cdk synth|deploy` (cdk.json): the stack, with Redis when `-c redis=true`. */
import { createApp } from './synth.js';

createApp().app.synth();
