module.exports = {
  displayName: 'webhooks-feature',
  preset: '../../../jest.preset.js',
  rootDir: __dirname,
};
