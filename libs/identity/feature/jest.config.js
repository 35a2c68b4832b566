module.exports = {
  displayName: 'identity-feature',
  preset: '../../../jest.preset.js',
  rootDir: __dirname,
};
